// `nubes` and `sless`: the two providers' settings, declared once (types, defaults, check, docs, schema).
import { group, setting } from "../../shared/settings";
import { boolean, oneOf, string } from "../../shared/validate";
import { name, nonEmpty, url } from "./value-rules";

const NUBES_SETTINGS = {
  endpoint: setting(url, { defaultDoc: "the provider's own", doc: "Nubes API endpoint." }),
  providerSource: setting(nonEmpty, { default: "terra.k8c.ru/nubes/nubes", doc: "Provider source address." }),
  providerVersion: setting(nonEmpty, { default: "2.0.0", doc: "Provider version constraint." }),
  vdcUid: setting(nonEmpty, { required: true, doc: "VDC the vApps go into (nubes_vapp.vdc_uid)." }),
  nsxtUid: setting(nonEmpty, { required: true, doc: "NSX-T edge/network of the vApps (nubes_vapp.nsxt_uid)." }),
  vappName: setting(name, {
    default: "vm-install",
    doc: 'vApp name prefix: each VM gets vApp "<prefix>-<vm name>" unless it names its own.',
  }),
  deleteMode: setting(oneOf(["delete", "suspend", "state_only"] as const), {
    default: "delete",
    doc:
      'What destroy does to vApps and VMs: "delete" removes them; "suspend" stops them (the disks stay); ' +
      '"state_only" (the provider\'s own default) forgets them and leaves them running, and billed.',
  }),
  resumeIfExists: setting(boolean(), { default: true, doc: "Adopt an existing vApp/VM of the same name." }),
} as const;

/** The vApp prefix when `nubes.vappName` is not written. */
export const DEFAULT_VAPP_PREFIX = NUBES_SETTINGS.vappName.default;

export const nubesSetting = group(NUBES_SETTINGS, {
  defaultDoc: 'none; required when a VM is of kind "nubes"',
  doc: "The Nubes provider and where VMs go.",
});

export const slessSetting = group(
  {
    endpoint: setting(url, { default: "https://sless.kube5s.ru", doc: "sless API endpoint (the platform's)." }),
    providerSource: setting(nonEmpty, {
      default: "sless.kube5s.ru/sless/sless",
      doc: "Provider source address (unverified: the provider is not public).",
    }),
    providerVersion: setting(string(), { default: "", doc: "Provider version constraint; empty means any." }),
    runtime: setting(string({ pattern: /^[a-z][a-z0-9.]*$/, allowed: 'a runtime name such as "nodejs20"' }), {
      default: "nodejs20",
      doc: "Job runtime name on the platform.",
    }),
  } as const,
  { default: {}, doc: "The sless provider and the jobs' runtime." },
);
