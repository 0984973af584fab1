// The fault matrix (issue 17): one install of postgresql cut at moments of its configuration and triggers,
// each on a sandbox of its own (support/fault-cases.ts MOMENTS, the second half).
import { describeE2E, perTest } from "../support/e2e";
import { MOMENTS, postgresMomentCases, T } from "../support/fault-cases";

describeE2E("fault matrix: a postgresql install cut while it configures, on sandbox VMs", () => {
  postgresMomentCases(perTest(T), MOMENTS.slice(4));
});
