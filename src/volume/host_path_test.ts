import assert from "node:assert/strict";
import {
  checkHostPathType,
  type HostFileKind,
  type HostPathFs,
} from "./host_path.ts";

function fakeFs(
  kinds: Record<string, HostFileKind>,
): HostPathFs & { made: string[] } {
  const made: string[] = [];
  return {
    made,
    kind: (path) => Promise.resolve(kinds[path]),
    makeDirectory(path) {
      made.push(`dir ${path}`);
      return Promise.resolve();
    },
    makeFile(path) {
      made.push(`file ${path}`);
      return Promise.resolve();
    },
  };
}

Deno.test("checkHostPathType() applies every type with upstream's messages", async () => {
  const fs = fakeFs({
    "/d": "Directory",
    "/f": "File",
    "/s": "Socket",
    "/c": "CharDevice",
    "/b": "BlockDevice",
  });
  const cases: [string, string, string | undefined][] = [
    ["/d", "Directory", undefined],
    ["/f", "Directory", "hostPath type check failed: /f is not a directory"],
    ["/x", "Directory", "hostPath type check failed: /x is not a directory"],
    ["/f", "File", undefined],
    ["/d", "File", "hostPath type check failed: /d is not a file"],
    ["/s", "Socket", undefined],
    ["/f", "Socket", "hostPath type check failed: /f is not a socket file"],
    ["/c", "CharDevice", undefined],
    [
      "/b",
      "CharDevice",
      "hostPath type check failed: /b is not a character device",
    ],
    ["/b", "BlockDevice", undefined],
    [
      "/c",
      "BlockDevice",
      "hostPath type check failed: /c is not a block device",
    ],
    [
      "/f",
      "DirectoryOrCreate",
      "hostPath type check failed: /f is not a directory",
    ],
    ["/d", "FileOrCreate", "hostPath type check failed: /d is not a file"],
    ["/anything", "", undefined],
    ["/d", "Weird", "Weird is an invalid volume type"],
  ];
  for (const [path, type, error] of cases) {
    const run = checkHostPathType(fs, path, type);
    if (error) await assert.rejects(run, { message: error }, `${path} ${type}`);
    else await run;
  }
  assert.deepEqual(fs.made, []);
});

Deno.test("checkHostPathType() creates missing paths for the OrCreate types", async () => {
  const fs = fakeFs({});
  await checkHostPathType(fs, "/new/dir", "DirectoryOrCreate");
  await checkHostPathType(fs, "/new/file", "FileOrCreate");
  assert.deepEqual(fs.made, ["dir /new/dir", "file /new/file"]);
});
