import assert from "node:assert/strict";
import { restartCountFromLogNames } from "./start_container.ts";

Deno.test("restartCountFromLogNames() counts rotated log files like upstream calcRestartCountByLogDir", () => {
  assert.equal(restartCountFromLogNames([]), 0);
  assert.equal(restartCountFromLogNames(["0.log", "1.log"]), 2);
  // only the rotated file of instance 4 is left (the live one was removed or not yet written)
  assert.equal(
    restartCountFromLogNames(["3.log", "4.log.20260101-120000.gz"]),
    5,
  );
  assert.equal(restartCountFromLogNames(["7.log.20260101-120000"]), 8);
  assert.equal(restartCountFromLogNames(["x.log", "log", "2.txt"]), 0);
});
