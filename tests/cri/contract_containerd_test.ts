import { createCriRuntime } from "../../src/runtime/mod.ts";
import { criContractSuite } from "./contract.ts";
import { criEnv } from "./helpers.ts";

const env = criEnv();

criContractSuite("containerd", () => {
  const runtime = createCriRuntime({
    endpoint: env.endpoint,
    timeoutMs: 60_000,
  });
  return Promise.resolve({
    runtime,
    image: env.image,
    pullableImage: env.registryImage,
    missingImage: env.registryImage.replace(
      /\/[^/]+$/,
      "/no-such-image:latest",
    ),
    logRoot: `${env.root}/pods`,
    [Symbol.asyncDispose]: () => runtime.close(),
  });
}, { ignore: !env.endpoint });
