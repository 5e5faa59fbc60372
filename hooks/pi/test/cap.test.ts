import assert from "node:assert/strict"
import { Buffer } from "node:buffer"
import { readdirSync, readFileSync } from "node:fs"
import test from "node:test"
import { capContent, capMarker, capStreams, fullOutputPathOf, joinedText, resultCompleteness, type ContentBlock } from "../../../src/yarp/hooks/ts/cap.ts"

const REF = "yr_0123456789abcdef0123456789abcdef"
const bytes = (text: string) => Buffer.byteLength(text, "utf8")
const VECTORS = new URL("../../../tests/vectors/cap/", import.meta.url)

type Vector = {
  name: string; tool: string; cap: number; ref: string; source: string
  completeness: "complete" | "incomplete" | "unknown"; must_keep: string[]; input: string; expected: string
}

const vectors: Vector[] = readdirSync(VECTORS).filter((name) => name.endsWith(".json")).sort()
  .map((name) => JSON.parse(readFileSync(new URL(name, VECTORS), "utf8")) as Vector)

test("the shared vectors exist (the Python cap is checked against the same files)", () => {
  assert.ok(vectors.length >= 12)
})

for (const vector of vectors) {
  test(`same view as the Python cap: ${vector.name}`, () => {
    const result = capContent([{ type: "text", text: vector.input }], vector.cap, vector.ref, vector.source, vector.completeness)
    const view = result === null ? vector.input : joinedText(result.content)
    assert.equal(view, vector.expected)
    assert.ok(bytes(view) <= vector.cap)
    const shown = new Set(view.split("\n"))
    for (const pattern of vector.must_keep) {
      const missing = vector.input.split("\n").filter((line) => new RegExp(pattern).test(line) && !shown.has(line))
      assert.deepEqual(missing, [], pattern)
    }
  })
}

test("the main marker keeps the contract's first line; the hint is a real pattern", () => {
  assert.equal(
    capMarker(9000, 5120, REF, "result_text", "incomplete", "error|KeyError"),
    `\n[yarp: 9000 byte(s) capped at 5120; ref=${REF}; result_text incomplete]\nSearch omitted output: yarp search ${REF} 'error|KeyError'\n`,
  )
  const text = Array.from({ length: 2000 }, (_, i) => (i === 1000 ? "ERROR disk full\n" : `line ${i}\n`)).join("")
  const result = capContent([{ type: "text", text }], 5120, REF, "result_text", "complete", 1)
  assert.ok(result !== null)
  const shown = joinedText(result.content)
  assert.ok(shown.includes("\nERROR disk full\n"))
  assert.ok(shown.includes("; exit status 1]"))
  assert.ok(!shown.includes("term|alternate"))
  assert.ok(bytes(shown) <= 5120)
  assert.equal(result.sourceBytes, bytes(text))
})

test("at or under the cap nothing changes; cap 0 disables it", () => {
  assert.equal(capContent([{ type: "text", text: "a".repeat(5120) }], 5120, REF, "result_text", "unknown"), null)
  assert.equal(capContent([{ type: "text", text: "a".repeat(2560) }, { type: "text", text: "b".repeat(2560) }], 5120, REF, "result_text", "unknown"), null)
  assert.equal(capContent([{ type: "text", text: "a".repeat(100_000) }], 0, REF, "result_text", "unknown"), null)
})

test("a long line is cut at a character boundary and never yields a replacement character", () => {
  for (const unit of ["é", "€", "𝄞"]) {
    const result = capStreams([["result_text", unit.repeat(4000) + "\nerror: boom\n"]], 2048, REF, "unknown")
    assert.ok(result !== null)
    assert.ok(!result[0].includes("\ufffd"))
    assert.ok(result[0].includes("error: boom\n"))
    assert.ok(bytes(result[0]) <= 2048)
  }
})

test("every line kept, one cut: the main marker follows the stream of the cut, not a line that reads like one", () => {
  const parts = capStreams([["stdout", "[yarp: line 1 cut after 5 of 9 byte(s)]\n"], ["stderr", "x".repeat(1500) + "\n"]], 1024, REF, "unknown")
  assert.ok(parts !== null)
  assert.equal(parts[0], "[yarp: line 1 cut after 5 of 9 byte(s)]\n")
  assert.ok(parts[1].startsWith("x".repeat(256) + "\n[yarp: line 1 cut after 256 of 1500 byte(s)]\n[yarp: 1541 byte(s) capped"))
  assert.ok(parts[1].includes(`ref=${REF}; stderr unknown]`))
})

test("the view takes the first text block's place; images keep their order and do not count", () => {
  const image = { type: "image", data: "AAAA", mimeType: "image/png" }
  const content: ContentBlock[] = [
    { type: "text", text: "A\n".repeat(1000) },
    image,
    { type: "text", text: "error: B\n" + "C\n".repeat(3000) },
  ]
  const result = capContent(content, 1024, REF, "result_text", "unknown")
  assert.ok(result !== null)
  assert.deepEqual(result.content.map((block) => block.type), ["text", "image"])
  assert.equal(result.content[1], image)
  assert.ok((result.content[0] as { text: string }).text.includes("error: B\n"))
  const imageOnly: ContentBlock[] = [{ type: "image", data: "x".repeat(100_000), mimeType: "image/png" }, { type: "text", text: "ok" }]
  assert.equal(capContent(imageOnly, 1024, REF, "result_text", "unknown"), null)
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
