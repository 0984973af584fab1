// debootstrap's own output read as counts, for the one progress line the sandbox image build shows
// (lib/shared/progress-line.ts) instead of debootstrap's ~800 "I:" lines (those go to the build's log file).

/**
 * What debootstrap prints, in order (non-verbose, as dev/sandbox/image.ts runs it):
 *   I: Retrieving InRelease / Checking Release signature / Retrieving Packages / Resolving dependencies ...
 *   I: Retrieving <package> <version>      then  I: Validating <package> <version>, once per package
 *   I: Extracting <package>...             the required packages, unpacked by hand (first stage)
 *   I: Installing core packages...         dpkg, libc, ... installed with no line each
 *   I: Unpacking required packages...      then  I: Unpacking <package>...    (dpkg --unpack)
 *   I: Configuring required packages...    then  I: Configuring <package>...  (dpkg --configure)
 *   I: Unpacking the base system...  /  I: Configuring the base system...     the same, for the rest
 *   I: Base system installed successfully.
 * It never prints how many packages there are before it has retrieved them all, and a few (the core
 * ones, pre-dependencies) are installed without an Unpacking line: the counts below are what it has
 * done, the number retrieved is the only total.
 */
export type DebootstrapStage = "index" | "retrieve" | "extract" | "core" | "unpack" | "configure" | "installed";

export interface DebootstrapCounts {
  stage: DebootstrapStage | undefined;
  retrieved: number;
  extracted: number;
  /** Distinct packages: a package dpkg handles twice (libc-bin's trigger) counts once. */
  unpacked: number;
  configured: number;
}

const INDEX_FILES = new Set(["InRelease", "Release", "Release.gpg", "Packages"]);

/** Reads debootstrap's lines one at a time. */
export class DebootstrapProgress {
  private stage: DebootstrapStage | undefined;
  private retrieved = 0;
  private extracted = 0;
  private readonly unpacked = new Set<string>();
  private readonly configured = new Set<string>();

  /** Takes one line of the build's output; true when the counts or the stage changed. */
  read(line: string): boolean {
    const before = this.key();
    this.take(line.trim());
    return this.key() !== before;
  }

  counts(): DebootstrapCounts {
    return {
      stage: this.stage,
      retrieved: this.retrieved,
      extracted: this.extracted,
      unpacked: this.unpacked.size,
      configured: this.configured.size,
    };
  }

  private key(): string {
    return JSON.stringify(this.counts());
  }

  private take(line: string): void {
    let m: RegExpExecArray | null;
    if ((m = /^I: Retrieving (\S+)(?: (\S+))?$/.exec(line))) {
      if (INDEX_FILES.has(m[1]) || !m[2]) this.stage = "index";
      else {
        this.stage = "retrieve";
        this.retrieved++;
      }
    } else if (/^I: (Checking Release signature|Resolving dependencies)/.test(line)) this.stage = "index";
    else if (/^I: Extracting \S+\.\.\.$/.test(line)) {
      this.stage = "extract";
      this.extracted++;
    } else if (/^I: Installing core packages/.test(line)) this.stage = "core";
    else if ((m = /^I: (Unpacking|Configuring) (required packages|the base system|\S+)\.\.\.$/.exec(line))) {
      this.stage = m[1] === "Unpacking" ? "unpack" : "configure";
      if (m[2] !== "required packages" && m[2] !== "the base system")
        (m[1] === "Unpacking" ? this.unpacked : this.configured).add(m[2]);
    } else if (/^I: Base system installed successfully/.test(line)) this.stage = "installed";
  }
}

/** The groups the progress line's stages fall in off a terminal: one printed line each. */
export function stageGroup(stage: DebootstrapStage | undefined): string {
  return stage === "extract" || stage === "core" || stage === "unpack" || stage === "configure"
    ? "install"
    : (stage ?? "start");
}

/** The counts as the progress line says them. */
export function describeCounts(c: DebootstrapCounts): string {
  const retrieved = `${c.retrieved} package${c.retrieved === 1 ? "" : "s"} retrieved`;
  switch (c.stage) {
    case undefined:
      return "starting debootstrap";
    case "index":
      return "reading the package index";
    case "retrieve":
      return retrieved;
    case "extract":
      return `${retrieved}, ${c.extracted} extracted`;
    case "core":
      return `${retrieved}, ${c.extracted} extracted, installing the core ones`;
    case "unpack":
    case "configure":
      return `${retrieved}, ${c.unpacked} unpacked, ${c.configured} configured`;
    case "installed":
      return `debootstrap done: ${retrieved}, ${c.unpacked} unpacked, ${c.configured} configured; packing the image`;
  }
}
