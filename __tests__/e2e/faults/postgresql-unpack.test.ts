// The fault matrix (issue 17): one install of postgresql cut at moments of its download and unpacking, each
// on a sandbox of its own (support/fault-cases.ts MOMENTS, the first half); the configure and trigger
// moments are in postgresql-configure.test.ts, so the two halves run side by side.
import { describeE2E, perTest } from "../support/e2e";
import { MOMENTS, postgresMomentCases, T } from "../support/fault-cases";

describeE2E("fault matrix: a postgresql install cut while it downloads and unpacks, on sandbox VMs", () => {
  postgresMomentCases(perTest(T), MOMENTS.slice(0, 4));
});
