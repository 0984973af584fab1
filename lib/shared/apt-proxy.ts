// A VM behind a proxy: the one URL its apt (and the jobs' key fetches) go through, declared once per VM
// (`vms[].aptProxy`) and passed to every installer's event as `apt_proxy`. Credentials are refused: the
// URL sits in cdktf.out, Terraform's state and a world-readable apt.conf.d file, none of them a secret's place.
import { isHostName, isIpv4, isIpv6 } from "./names";
import { setting } from "./settings";
import { string, type Validator } from "./validate";

/** scheme://host[:port][/]: all apt's Acquire::http(s)::Proxy needs, nothing a shell or apt.conf reads. */
const SHAPE = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?\/?$/;

/** Why `value` is not a proxy URL vm-install writes, or undefined when it is one. */
export function aptProxyProblem(value: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value))
    return (
      "holds credentials (user@ or user:password@): they would sit in cdktf.out, Terraform's state and a " +
      "world-readable file on the VM; use a proxy that admits the VM by its address"
    );
  const m = SHAPE.exec(value);
  if (!m) return "is not http://host:port or https://host:port (no path, query, credentials, quotes or spaces)";
  const host = m[2].startsWith("[") ? m[2].slice(1, -1) : m[2];
  const hostOk = m[2].startsWith("[") ? isIpv6(host) : isIpv4(host) || isHostName(host);
  if (!hostOk) return `has host ${JSON.stringify(m[2])}, not an IPv4 address, [IPv6 address] or DNS name`;
  if (m[3] !== undefined && (Number(m[3]) < 1 || Number(m[3]) > 65535)) return `has port ${m[3]}, not 1 to 65535`;
  return undefined;
}

/** The rule of `vms[].aptProxy` and of the event's `apt_proxy`. */
export const aptProxyUrl: Validator<string> = string({
  allowed: "an http:// or https:// proxy URL: scheme, host and optional port, no credentials or path",
  check: aptProxyProblem,
});

/** `vms[].aptProxy`, the event's `apt_proxy`: declared once for the VM's settings, the handlers and the docs. */
export const APT_PROXY_SETTING = setting(aptProxyUrl, {
  event: "apt_proxy",
  defaultDoc: "none: apt goes direct",
  doc:
    "The proxy this VM's apt goes through (http://host:port; no credentials): every installer writes it to " +
    "/etc/apt/apt.conf.d/90vm-install-proxy before its first apt step (detached steps read it there; key " +
    "fetches take it from apt's configuration); removing the setting removes that file.",
});
