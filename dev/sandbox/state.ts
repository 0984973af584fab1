// Where sandboxes keep their state. Everything about a running sandbox is in its run directory, so that a
// different process (the CLI's `down`, a later test run cleaning up after a killed one) can find and
// remove it knowing only the name.
import * as fs from "node:fs";
import * as path from "node:path";
import type { ProcRef } from "./procfs";
import type { Release } from "./release";

/** /run is cleared on reboot, which is exactly the lifetime of these directories. */
export const RUN_ROOT = process.env.VM_INSTALL_SANDBOX_RUN_DIR || "/run/vm-install-sandbox";
/** Survives reboots: the base image is built once per machine. */
export const CACHE_DIR = process.env.VM_INSTALL_SANDBOX_CACHE_DIR || "/var/cache/vm-install";
/** Subnet claims live beside the run directories; a leading dot cannot clash with a sandbox name. */
export const SUBNET_DIR = path.join(RUN_ROOT, ".subnets");

// A hostname label (the sandbox's hostname is its name) short enough for the netns name.
const NAME_RE = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

export function validateName(name: string): void {
  if (!NAME_RE.test(name)) {
    throw new Error(
      `invalid sandbox name ${JSON.stringify(name)}: ` +
        "use 1-32 characters a-z, 0-9 and '-', starting and ending with a letter or digit",
    );
  }
}

export type SandboxStatus = "starting" | "running" | "stopping";

export interface SandboxState {
  name: string;
  runDir: string;
  status: SandboxStatus;
  createdAt: string;
  /** The process that started it; unless `persistent`, the sandbox is a leftover once that process is gone. */
  owner: ProcRef | null;
  /** Started by the CLI's `up`: outlives its starter and stays until `down`. */
  persistent?: boolean;
  /** The `unshare` process at the top of the sandbox's process tree. */
  pid?: ProcRef;
  subnet?: number;
  netns?: string;
  hostVeth?: string;
  nftTable?: string;
  address?: string;
  hostAddress?: string;
  port: number;
  user: string;
  privateKeyPath: string;
  hostKeySha256?: string;
  hostPublicKey?: string;
  knownHostsPath?: string;
  lowerDir?: string;
  imageHash?: string;
  /** The snapshot's layer this sandbox boots from (snapshot.ts), between the image and its own layer. */
  snapshot?: string;
  /** Booted with a NoCloud seed: cloud-init made the login user and the host keys. */
  cloudInit?: boolean;
  /** Absent in the state of a sandbox started before releases existed: bookworm. */
  release?: Release;
  timings?: Record<string, number>;
}

export function runDirOf(name: string): string {
  return path.join(RUN_ROOT, name);
}

function statePath(name: string): string {
  return path.join(runDirOf(name), "state.json");
}

export function readState(name: string): SandboxState | undefined {
  try {
    return JSON.parse(fs.readFileSync(statePath(name), "utf8")) as SandboxState;
  } catch {
    return undefined;
  }
}

export function writeState(state: SandboxState): void {
  writeFileAtomic(statePath(state.name), `${JSON.stringify(state, null, 2)}\n`);
}

/** Names of every run directory, including half-created or half-removed ones. */
export function listRunDirs(): string[] {
  try {
    return fs
      .readdirSync(RUN_ROOT, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith("."))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** Writes a file atomically (temp + rename) so a reader in another process never sees half of it. */
export function writeFileAtomic(file: string, data: string, mode = 0o644): void {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
  fs.writeFileSync(tmp, data, { mode });
  fs.renameSync(tmp, file);
}
