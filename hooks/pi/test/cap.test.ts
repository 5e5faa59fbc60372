import assert from "node:assert/strict"
import { Buffer } from "node:buffer"
import test from "node:test"
import { capContent, capMarker, fullOutputPathOf, joinedText, resultCompleteness, type ContentBlock } from "../src/cap.ts"

const REF = "yr_0123456789abcdef0123456789abcdef"
const bytes = (text: string) => Buffer.byteLength(text, "utf8")
const visibleBytes = (content: ContentBlock[]) => bytes(joinedText(content))

test("the marker has the contract's exact text", () => {
  assert.equal(
    capMarker(9000, 5120, REF, "result_text", "incomplete"),
    `\n[yarp: 9000 byte(s) capped at 5120; ref=${REF}; result_text incomplete]\nSearch omitted output: yarp search ${REF} 'term|alternate'\n`,
  )
})

test("at or under the cap nothing changes; cap 0 disables it", () => {
  assert.equal(capContent([{ type: "text", text: "a".repeat(5120) }], 5120, REF, "result_text", "unknown"), null)
  assert.equal(capContent([{ type: "text", text: "a".repeat(2560) }, { type: "text", text: "b".repeat(2560) }], 5120, REF, "result_text", "unknown"), null)
  assert.equal(capContent([{ type: "text", text: "a".repeat(100_000) }], 0, REF, "result_text", "unknown"), null)
})

test("over the cap: head floor(budget/2), tail the rest, marker between, total exactly the cap", () => {
  const text = Array.from({ length: 2000 }, (_, i) => `line ${i}\n`).join("")
  const result = capContent([{ type: "text", text }], 5120, REF, "result_text", "complete")
  assert.ok(result !== null)
  const marker = capMarker(bytes(text), 5120, REF, "result_text", "complete")
  const budget = 5120 - bytes(marker)
  const head = Math.floor(budget / 2)
  const expected = text.slice(0, head) + marker + text.slice(text.length - (budget - head))
  assert.equal(joinedText(result.content), expected)
  assert.equal(visibleBytes(result.content), 5120)
  assert.equal(result.content.length, 1)
  assert.equal(result.sourceBytes, bytes(text))
  assert.equal(result.sourceText, text)
})

test("one byte over the cap still caps", () => {
  const result = capContent([{ type: "text", text: "z".repeat(5121) }], 5120, REF, "result_text", "unknown")
  assert.ok(result !== null)
  assert.ok(joinedText(result.content).includes("5121 byte(s) capped at 5120"))
  assert.equal(visibleBytes(result.content), 5120)
})

test("cuts never split a UTF-8 character: head moves back, tail moves forward", () => {
  for (const unit of ["é", "€", "𝄞"]) {
    for (let pad = 0; pad < 4; pad += 1) {
      const text = "a".repeat(pad) + unit.repeat(4000)
      const result = capContent([{ type: "text", text }], 5120, REF, "result_text", "unknown")
      assert.ok(result !== null)
      const shown = joinedText(result.content)
      assert.ok(!shown.includes("\ufffd"), `replacement character for ${unit} pad ${pad}`)
      assert.ok(bytes(shown) <= 5120)
      const marker = capMarker(bytes(text), 5120, REF, "result_text", "unknown")
      const [head, tail] = shown.split(marker)
      assert.ok(text.startsWith(head) && text.endsWith(tail))
      const budget = 5120 - bytes(marker)
      assert.ok(bytes(head) <= Math.floor(budget / 2) && Math.floor(budget / 2) - bytes(head) < bytes(unit))
    }
  }
})

test("blocks are measured joined; the marker sits at the first omitted position; images keep order", () => {
  const image = { type: "image", data: "AAAA", mimeType: "image/png" }
  const content: ContentBlock[] = [
    { type: "text", text: "A".repeat(1000) },
    image,
    { type: "text", text: "B".repeat(6000) },
    { type: "text", text: "C".repeat(1000) },
  ]
  const result = capContent(content, 5120, REF, "result_text", "unknown")
  assert.ok(result !== null)
  assert.equal(result.sourceBytes, 8000)
  const types = result.content.map((block) => (block.type === "text" ? (block as any).text[0] : "img"))
  // A kept whole, image in place, B's head + marker + B's end as one block, C whole.
  assert.deepEqual(types, ["A", "img", "B", "C"])
  assert.ok((result.content[2] as any).text.includes("[yarp: 8000 byte(s) capped at 5120;"))
  assert.equal(result.content[1], image)
  const shown = joinedText(result.content)
  assert.ok(shown.startsWith("A".repeat(1000) + "B"))
  assert.ok(shown.endsWith("C".repeat(1000)))
  assert.ok(bytes(shown) <= 5120)
  assert.equal(result.content.filter((block) => block.type === "image").length, 1)
})

test("image blocks alone never count toward the budget", () => {
  const content: ContentBlock[] = [{ type: "image", data: "x".repeat(100_000), mimeType: "image/png" }, { type: "text", text: "ok" }]
  assert.equal(capContent(content, 1024, REF, "result_text", "unknown"), null)
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
