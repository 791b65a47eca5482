import assert from "node:assert/strict";
import {
  createVersionValue,
  parseSemanticVersion,
  validateDynamicVersion,
} from "./version_value.ts";

const BUILD = "v1.34.0+kubelet.ts.0.1.0";

Deno.test("createVersionValue() records true/false/raw and dynamic versions", () => {
  const seen: string[] = [];
  const value = createVersionValue({
    buildVersion: BUILD,
    onDynamicVersion: (v) => seen.push(v),
  });
  assert.equal(value.type, "version");
  assert.equal(value.text(), "false");
  value.set("true");
  assert.equal(value.request(), "true");
  value.set("raw");
  assert.equal(value.request(), "raw");
  value.set("false");
  assert.equal(value.request(), "false");
  value.set("v1.34.0-custom.1");
  assert.deepEqual(seen, ["v1.34.0-custom.1"]);
  assert.equal(value.request(), "false");
  assert.throws(
    () => value.set("maybe"),
    /strconv.ParseBool: parsing "maybe": invalid syntax/,
  );
});

Deno.test("validateDynamicVersion() needs the same major/minor/patch", () => {
  validateDynamicVersion(BUILD, BUILD);
  validateDynamicVersion("v1.34.0", BUILD);
  assert.throws(
    () => validateDynamicVersion("v1.35.0", BUILD),
    {
      message:
        `version "v1.35.0" must match major/minor/patch of default version "${BUILD}"`,
    },
  );
  assert.throws(() => validateDynamicVersion("", BUILD), {
    message: "version must not be empty",
  });
  assert.throws(() => validateDynamicVersion("vx", BUILD), {
    message: 'could not parse "vx" as version',
  });
});

Deno.test("parseSemanticVersion() follows apimachinery's rules", () => {
  assert.deepEqual(parseSemanticVersion("v1.2.3-a.b+c"), [1, 2, 3]);
  assert.throws(() => parseSemanticVersion("v1.2"), {
    message: 'illegal version string "v1.2"',
  });
  assert.throws(() => parseSemanticVersion("v1.02.3"), {
    message: 'illegal zero-prefixed version component "02" in "v1.02.3"',
  });
  assert.throws(() => parseSemanticVersion("v1.2.3-"), {
    message: 'could not parse pre-release/metadata (-) in version "v1.2.3-"',
  });
});
