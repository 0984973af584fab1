import * as fs from "node:fs";
import * as path from "node:path";
import { GENERATED_DIR, generateBindings } from "../providers/generate";
import { filesUnder, tempDir } from "./support/synth";

test("the committed bindings are exactly what the schemas generate", async () => {
  const out = tempDir("providers");
  expect(await generateBindings(out)).toEqual(["nubes", "sless"]);
  const rel = (root: string) =>
    filesUnder(root)
      .map((f) => path.relative(root, f))
      .sort();
  expect(rel(GENERATED_DIR)).toEqual(rel(out));
  for (const file of rel(out)) {
    const same =
      fs.readFileSync(path.join(out, file), "utf8") === fs.readFileSync(path.join(GENERATED_DIR, file), "utf8");
    expect({ file, same }).toEqual({ file, same: true }); // run `npm run providers` after editing providers/schemas
  }
  expect(rel(out)).toContain(path.join("sless", "job", "index.ts"));
  expect(rel(out)).toContain(path.join("nubes", "vc-vm-v3", "index.ts"));
}, 60000);
