import assert from "node:assert/strict";
import { mappingsFileText, parseMappingsFile } from "./id_mappings.ts";

// the bytes upstream's kubelet writes for a pod at 131072 (json.Marshal of userNamespace)
const UPSTREAM_FILE =
  '{"uidMappings":[{"hostId":131072,"containerId":0,"length":65536}],' +
  '"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}';

Deno.test("mappingsFileText(): the bytes upstream writes", () => {
  assert.equal(
    mappingsFileText({ hostId: 131072, length: 65536 }),
    UPSTREAM_FILE,
  );
});

Deno.test("parseMappingsFile(): reads upstream's file and its own", () => {
  assert.deepEqual(parseMappingsFile(UPSTREAM_FILE), {
    hostId: 131072,
    length: 65536,
  });
  const range = { hostId: 4294836224, length: 65536 };
  assert.deepEqual(parseMappingsFile(mappingsFileText(range)), range);
});

Deno.test("parseMappingsFile(): Go's decoding, keys in any case, unknown keys ignored", () => {
  assert.deepEqual(
    parseMappingsFile(
      '{"UIDMappings":[{"HostID":65536,"length":65536,"x":1}],"gidmappings":[{"hostId":65536,"length":65536}],"extra":true}',
    ),
    { hostId: 65536, length: 65536 },
  );
});

Deno.test("parseMappingsFile(): upstream's refusals", () => {
  const m = (hostId: number, containerId = 0, length = 65536) => ({
    hostId,
    containerId,
    length,
  });
  const file = (uids: unknown, gids: unknown) =>
    JSON.stringify({ uidMappings: uids, gidMappings: gids });
  const cases: [string, RegExp][] = [
    ["{", /^invalid user namespace mappings file: /],
    [
      "[]",
      /^invalid user namespace mappings file: json: cannot unmarshal array/,
    ],
    [
      file([{ hostId: -1, containerId: 0, length: 65536 }], []),
      /^invalid user namespace mappings file: json: cannot unmarshal -1 into Go struct field userNamespace\.uidMappings\.hostId of type uint32$/,
    ],
    [
      file([{ hostId: 2 ** 32, containerId: 0, length: 1 }], []),
      /cannot unmarshal 4294967296/,
    ],
    [
      file([], []),
      /^invalid user namespace configuration: no more than one mapping allowed\.$/,
    ],
    ["null", /no more than one mapping allowed/],
    [
      file([m(65536), m(131072)], [m(65536), m(131072)]),
      /no more than one mapping allowed/,
    ],
    [
      file([m(65536)], []),
      /^invalid user namespace configuration: GID and UID mappings should be identical\.$/,
    ],
    [
      file([m(65536)], [m(131072)]),
      /^invalid user namespace configuration: GID and UID mapping should be identical$/,
    ],
    [
      file([m(65536, 1)], [m(65536, 1)]),
      /^invalid user namespace configuration: UID 0 must be mapped$/,
    ],
  ];
  for (const [text, want] of cases) {
    assert.throws(() => parseMappingsFile(text), { message: want }, text);
  }
});
