// A replaced nubes VM is learned and installed anew, with the sless job target (support/twin-replaced.ts).
import { describeReplacedVm } from "./support/twin-replaced";

describeReplacedVm("sless");
