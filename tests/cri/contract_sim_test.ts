import { createSimRuntime } from "../../src/runtime/sim/mod.ts";
import { criContractSuite } from "./contract.ts";

const IMAGE = "kts.local/busybox:latest";
const PULLABLE = "127.0.0.1:5000/kts/busybox:latest";

criContractSuite("sim", () => {
  const runtime = createSimRuntime({
    scenario: {
      preloadedImages: [IMAGE, "registry.k8s.io/pause:3.10"],
      registryImages: [IMAGE, PULLABLE],
    },
  });
  return Promise.resolve({
    runtime,
    image: IMAGE,
    pullableImage: PULLABLE,
    missingImage: "127.0.0.1:5000/kts/no-such-image:latest",
    logRoot: "",
    [Symbol.asyncDispose]: () => runtime.close(),
  });
});
