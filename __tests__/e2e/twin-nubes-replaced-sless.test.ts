// A replaced nubes VM is learned and installed anew, with the sless job target (support/twin-replaced.ts):
// the VM deleted outside Terraform; the local suite proves a changed image and `terraform apply -replace`.
import { describeReplacedVm } from "./support/twin-replaced";

describeReplacedVm("sless", ["deleted"]);
