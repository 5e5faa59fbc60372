import assert from "node:assert/strict"
import test from "node:test"
import { fullOutputPathOf } from "../../../src/yarp/agents/pi/extension.ts"
import { joinedText, resultCompleteness, withView, type ContentBlock } from "../../../src/yarp/agents/ts/content.ts"

test("the text is the text blocks joined without separators; other blocks do not count", () => {
  const content: ContentBlock[] = [{ type: "text", text: "a\n" }, { type: "image", data: "AAAA" }, { type: "text", text: "b" }]
  assert.equal(joinedText(content), "a\nb")
  assert.equal(joinedText([{ type: "image", data: "x" }]), "")
})

test("the view takes the first text block's place; images keep their order", () => {
  const image = { type: "image", data: "AAAA", mimeType: "image/png" }
  const second = { type: "image", data: "BBBB", mimeType: "image/png" }
  const content: ContentBlock[] = [image, { type: "text", text: "A\n" }, second, { type: "text", text: "B\n" }]
  const out = withView(content, "the view\n")
  assert.deepEqual(out, [image, { type: "text", text: "the view\n" }, second])
  assert.equal(out[0], image)
  assert.deepEqual(content[1], { type: "text", text: "A\n" }, "the input blocks are left as they were")
})

test("completeness: full output file → complete; truncated true/false; absent → unknown", () => {
  assert.equal(resultCompleteness(undefined, "/tmp/pi-bash-0011223344556677.log"), "complete")
  assert.equal(resultCompleteness({ truncated: true }, undefined), "incomplete")
  assert.equal(resultCompleteness({ truncated: false }, undefined), "complete")
  assert.equal(resultCompleteness({ truncation: { truncated: true } }, undefined), "incomplete")
  assert.equal(resultCompleteness({ truncation: { truncated: false } }, undefined), "complete")
  assert.equal(resultCompleteness({ diff: "..." }, undefined), "unknown")
  assert.equal(resultCompleteness(undefined, undefined), "unknown")
  assert.equal(resultCompleteness({ truncated: "yes" }, undefined), "unknown")
})

test("only the bash tool's absolute fullOutputPath is an approved source", () => {
  assert.equal(fullOutputPathOf("bash", { fullOutputPath: "/tmp/pi-bash-a.log" }), "/tmp/pi-bash-a.log")
  assert.equal(fullOutputPathOf("read", { fullOutputPath: "/tmp/pi-bash-a.log" }), undefined)
  assert.equal(fullOutputPathOf("bash", { fullOutputPath: "relative.log" }), undefined)
  assert.equal(fullOutputPathOf("bash", undefined), undefined)
})
