// No component writes visible English of its own: every text comes from the catalogue through
// t() (docs/decisions/070-languages.md). An AST check over app/**/*.tsx with
// the TypeScript compiler's own parser (TypeScript 7's API): JSX text, string literals that are
// JSX children (also through ?:, && and ||), and the attributes a visitor sees or hears.
import { readdirSync } from "node:fs";
import path from "node:path";
import { API } from "typescript/unstable/sync";
import { SyntaxKind } from "typescript/unstable/ast";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
/** Attributes a visitor reads or hears; `label`, `pendingLabel` and `button` are our form components' visible texts. */
const VISIBLE_ATTRIBUTES = new Set(["aria-label", "aria-description", "title", "placeholder", "alt", "label", "pendingLabel", "button"]);
/** Texts that are not words in any language. Keep this tiny. */
const ALLOWED = new Set(["·", "+", "/"]);

const hasWords = (text: string) => /\p{L}/u.test(text) && !ALLOWED.has(text.trim());

type Node = { kind: number; text?: string; parent?: Node; name?: Node; initializer?: Node; tagName?: Node; attributes?: Node; properties?: readonly Node[]; pos: number; forEachChild(cb: (n: Node) => void): void };
type Finding = { file: string; what: string; text: string };

/**
 * Whether a string literal is shown as a child of a JSX element: directly, or as a branch of ?:
 * or an operand of &&, ||, ?? (never a condition or a comparison's operand), through parentheses.
 */
function isJsxChildLiteral(node: Node): boolean {
  let child = node;
  let current = node.parent;
  for (;;) {
    if (current?.kind === SyntaxKind.ParenthesizedExpression) {
      // just climb
    } else if (current?.kind === SyntaxKind.ConditionalExpression) {
      if ((current as unknown as { condition: Node }).condition === child) return false;
    } else if (current?.kind === SyntaxKind.BinaryExpression) {
      const operator = (current as unknown as { operatorToken: Node }).operatorToken.kind;
      if (![SyntaxKind.AmpersandAmpersandToken, SyntaxKind.BarBarToken, SyntaxKind.QuestionQuestionToken].includes(operator)) return false;
    } else break;
    child = current;
    current = current.parent;
  }
  return current?.kind === SyntaxKind.JsxExpression && current.parent?.kind !== SyntaxKind.JsxAttribute;
}

function literalText(node: Node | undefined): string | null {
  if (!node) return null;
  if (node.kind === SyntaxKind.StringLiteral || node.kind === SyntaxKind.NoSubstitutionTemplateLiteral) return node.text ?? "";
  if (node.kind === SyntaxKind.JsxExpression) {
    let inner = (node as unknown as { expression?: Node }).expression;
    while (inner?.kind === SyntaxKind.ParenthesizedExpression) inner = (inner as unknown as { expression?: Node }).expression;
    return literalText(inner);
  }
  if (node.kind === SyntaxKind.TemplateExpression) return (node as unknown as { head: { text: string } }).head.text;
  return null;
}

function elementOf(attribute: Node): { tag: string; attrs: Map<string, string | null> } {
  const element = attribute.parent?.parent;
  const tag = element?.tagName?.text ?? "";
  const attrs = new Map<string, string | null>();
  for (const a of element?.attributes?.properties ?? []) if (a.name?.text) attrs.set(a.name.text, literalText(a.initializer));
  return { tag, attrs };
}

function findHardCodedText(sourceFile: Node, file: string): Finding[] {
  const findings: Finding[] = [];
  const visit = (node: Node) => {
    if (node.kind === SyntaxKind.JsxText && hasWords(node.text ?? "")) findings.push({ file, what: "JSX text", text: node.text!.trim() });
    if ((node.kind === SyntaxKind.StringLiteral || node.kind === SyntaxKind.NoSubstitutionTemplateLiteral || node.kind === SyntaxKind.TemplateExpression) && isJsxChildLiteral(node)) {
      const text = literalText(node) ?? "";
      if (hasWords(text)) findings.push({ file, what: "JSX child string", text });
    }
    if (node.kind === SyntaxKind.JsxAttribute) {
      const name = node.name?.text ?? "";
      const text = literalText(node.initializer);
      if (text !== null && hasWords(text)) {
        const { tag, attrs } = elementOf(node);
        // An <input type="submit|button|reset"> shows its value as its caption; a <button>'s value
        // is only submitted (its children are the caption), like name, id, className, data-*, href.
        const shownValue = name === "value" && tag === "input" && ["submit", "button", "reset"].includes(attrs.get("type") ?? "");
        if (VISIBLE_ATTRIBUTES.has(name) || shownValue) findings.push({ file, what: `${name}=`, text });
      }
    }
    node.forEachChild(visit);
  };
  visit(sourceFile);
  return findings;
}

function tsxFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? tsxFiles(full) : e.name.endsWith(".tsx") ? [full] : [];
  });
}

describe("no hard-coded visible text in components", () => {
  let api: API;
  let program: { getSourceFile(file: string): unknown };
  beforeAll(() => {
    api = new API({ cwd: ROOT });
    program = api.updateSnapshot({ openProject: path.join(ROOT, "tsconfig.json") }).getProjects()[0]!.program;
  }, 120_000);
  afterAll(() => api?.close());

  const scan = (file: string) => findHardCodedText(program.getSourceFile(file) as Node, path.relative(ROOT, file));

  it("flags every kind of hard-coded text in a component written that way (the check can fail)", () => {
    const findings = scan(path.join(ROOT, "tests/unit/i18n/fixtures/hard-coded.tsx"));
    expect(findings.map((f) => f.text).sort()).toEqual(
      ["A picture", "Hard-coded heading", "Hello ", "Press me", "Save", "Saving…", "Send it", "Type here", "Your things"].sort(),
    );
  });

  it("passes attribute values a visitor never sees (a <button value>, name, id, className, data-*, href) and still flags a hard-coded alt", () => {
    const findings = scan(path.join(ROOT, "tests/unit/i18n/fixtures/not-shown.tsx"));
    expect(findings).toEqual([{ file: "tests/unit/i18n/fixtures/not-shown.tsx", what: "alt=", text: "Logo" }]);
  });

  it("finds none in app/**/*.tsx", () => {
    const files = tsxFiles(path.join(ROOT, "app"));
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap(scan)).toEqual([]);
  });
});
