import assert from "node:assert/strict";
import { CsvParseError, readCsvRecord } from "./csv.ts";

Deno.test("readCsvRecord() splits one record like encoding/csv", () => {
  assert.deepEqual(readCsvRecord(""), []);
  assert.deepEqual(readCsvRecord("a"), ["a"]);
  assert.deepEqual(readCsvRecord("a,b,,c"), ["a", "b", "", "c"]);
  assert.deepEqual(readCsvRecord(' a ,"b,c","d""e"'), [" a ", "b,c", 'd"e']);
  assert.deepEqual(readCsvRecord("a,b\nc,d"), ["a", "b"]);
  assert.deepEqual(readCsvRecord("\n\nx"), ["x"]);
  assert.deepEqual(readCsvRecord('"multi\nline",z'), ["multi\nline", "z"]);
  assert.deepEqual(readCsvRecord("a,\r\n"), ["a", ""]);
});

Deno.test("readCsvRecord() reports quote errors with line and column", () => {
  const cases: [string, string][] = [
    ['a"b', 'parse error on line 1, column 2: bare " in non-quoted-field'],
    ['x,a"b', 'parse error on line 1, column 4: bare " in non-quoted-field'],
    [
      '"a"b',
      'parse error on line 1, column 3: extraneous or missing " in quoted-field',
    ],
    [
      '"abc',
      'parse error on line 1, column 6: extraneous or missing " in quoted-field',
    ],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => readCsvRecord(input), (e: unknown) => {
      assert.ok(e instanceof CsvParseError);
      assert.equal(e.message, message);
      return true;
    });
  }
});
