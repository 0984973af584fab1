// A replaced nubes VM is learned and installed anew, with the local job target (support/twin-replaced.ts).
import { describeReplacedVm } from "./support/twin-replaced";

describeReplacedVm("local");
