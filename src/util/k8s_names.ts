/**
 * Kubernetes name checks used by kubelet flags (`--node-labels`,
 * `--register-with-taints`): qualified names and label values, returning the
 * same message lists as apimachinery's `validation` package.
 * @module
 */

const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_REGEXP = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_REGEXP = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_REGEXP = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

function regexErrorText(
  msg: string,
  fmt: string,
  ...examples: string[]
): string {
  // Upstream joins examples as "'a', or 'b', or 'c', regex used ...".
  let text = msg + " (e.g. ";
  examples.forEach((example, i) => {
    if (i > 0) text += " or ";
    text += `'${example}', `;
  });
  return text + `regex used for validation is '${fmt}')`;
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

const encoder = new TextEncoder();
function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** apimachinery `IsDNS1123Subdomain`. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_REGEXP.test(value)) {
    errs.push(
      regexErrorText(
        DNS1123_SUBDOMAIN_MSG,
        DNS1123_SUBDOMAIN_FMT,
        "example.com",
      ),
    );
  }
  return errs;
}

/** apimachinery `IsQualifiedName`: `[prefix/]name`. Empty list means valid. */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? "";
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix === "") errs.push("prefix part must be non-empty");
    else {errs.push(
        ...dns1123SubdomainErrors(prefix).map((m) => "prefix part " + m),
      );}
  } else {
    return [
      "a qualified name " +
      regexErrorText(
        QUALIFIED_NAME_MSG,
        QUALIFIED_NAME_FMT,
        "MyName",
        "my.name",
        "123-abc",
      ) +
      " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name === "") errs.push("name part must be non-empty");
  else if (byteLength(name) > 63) errs.push("name part " + maxLenError(63));
  if (!QUALIFIED_NAME_REGEXP.test(name)) {
    errs.push(
      "name part " +
        regexErrorText(
          QUALIFIED_NAME_MSG,
          QUALIFIED_NAME_FMT,
          "MyName",
          "my.name",
          "123-abc",
        ),
    );
  }
  return errs;
}

/** apimachinery `IsValidLabelValue`. Empty list means valid. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_REGEXP.test(value)) {
    errs.push(
      regexErrorText(
        LABEL_VALUE_MSG,
        LABEL_VALUE_FMT,
        "MyValue",
        "my_value",
        "12345",
      ),
    );
  }
  return errs;
}

const DNS1123_LABEL_REGEXP = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";

/** apimachinery `IsDNS1123Label`. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLenError(63));
  if (DNS1123_LABEL_REGEXP.test(value)) return errors;
  // a valid subdomain whose length was checked above can only fail the label rule by its dots
  if (DNS1123_SUBDOMAIN_REGEXP.test(value)) {
    errors.push("must not contain dots");
  } else {
    errors.push(
      regexErrorText(
        DNS1123_LABEL_MSG,
        DNS1123_LABEL_FMT,
        "my-name",
        "123-abc",
      ),
    );
  }
  return errors;
}
