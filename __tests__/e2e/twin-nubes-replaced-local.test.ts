// A replaced nubes VM is learned and installed anew, with the local job target (support/twin-replaced.ts):
// a changed image and `terraform apply -replace`; the sless suite proves the VM deleted outside Terraform.
import { describeReplacedVm } from "./support/twin-replaced";

describeReplacedVm("local", ["image", "replace"]);
