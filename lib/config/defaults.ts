// Every default in one place; types.ts documents them and parse.ts fills them in.
import type { DockerConfig, PackagesConfig, PostgresConfig } from "./types";

export const DEFAULT_STACK_NAME = "vm-install";

export const NUBES_DEFAULTS = {
  providerSource: "terra.k8c.ru/nubes/nubes",
  providerVersion: "2.0.0",
  vappName: "vm-install",
  deleteMode: "delete",
  resumeIfExists: true,
} as const;

export const SLESS_DEFAULTS = {
  endpoint: "https://sless.kube5s.ru",
  providerSource: "sless.kube5s.ru/sless/sless",
  providerVersion: "",
  runtime: "nodejs20",
} as const;

export const DEFAULT_JOB_TARGET = "sless";

export const VM_DEFAULTS = {
  kind: "nubes",
  cpu: 2,
  ram: 2,
  disk: 20,
  image: "Ubuntu_22-20G",
  user: "ubuntu",
  publicKeyPath: "vm_key.pub",
  privateKeyPath: "vm_key",
  accessPorts: ["22"],
  sshPort: 22,
  addressKey: "externalConnect",
  zabbix: false,
} as const;

export const PACKAGES_DEFAULTS: PackagesConfig = {
  enabled: true,
  waitTimeoutSec: 600,
  packages: ["git", "curl", "htop", "jq", "unzip"],
  update: true,
};

export const DOCKER_DEFAULTS: DockerConfig = {
  enabled: false,
  waitTimeoutSec: 900,
  compose: true,
  channel: "official",
  repoUrl: "https://download.docker.com/linux",
  verify: "hello-world",
};

export const POSTGRES_DEFAULTS: PostgresConfig = {
  enabled: false,
  waitTimeoutSec: 900,
  dbName: "myapp",
  dbUser: "app_user",
  listenAddresses: "localhost",
  allowRemote: false,
  allowedCidrs: ["0.0.0.0/0"],
  repoUrl: "https://apt.postgresql.org/pub/repos/apt",
};
