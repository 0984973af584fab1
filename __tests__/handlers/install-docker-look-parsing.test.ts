// install-docker reads versions as each tool prints them (docker, compose v2 plugin and distribution package,
// compose v1), and takes systemctl's error text on a VM without systemd as no state rather than a state.
import { dockerLook, parseDockerState, versionIn } from "../../handlers/install-docker/docker-state";
import { answerLook } from "./support/look-answers";

describe("install-docker: parsing", () => {
  it("reads versions the way the tools print them", () => {
    expect(versionIn("Docker version 20.10.24+dfsg1, build 297e128")).toBe("20.10.24+dfsg1");
    expect(versionIn("Docker Compose version v2.29.1")).toBe("2.29.1");
    expect(versionIn("Docker Compose version 2.24.6+ds1-0ubuntu1~22.04.1")).toBe("2.24.6+ds1-0ubuntu1~22.04.1");
    expect(versionIn("docker-compose version 1.29.2, build unknown")).toBe("1.29.2");
  });

  it("takes an error text from systemctl as no state", () => {
    const state = parseDockerState(
      answerLook(dockerLook([]), {
        active: { text: "System has not been booted with systemd as init system (PID 1). Can't operate.\n", code: 1 },
        enabled: { text: "Failed to get unit file state for docker.service: No such file or directory\n", code: 1 },
      }),
      [],
    );
    expect(state.active).toBe("");
    expect(state.enabled).toBe("");
  });
});
