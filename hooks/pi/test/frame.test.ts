import assert from "node:assert/strict"
import { Buffer } from "node:buffer"
import test from "node:test"
import { AckReader, ackLineLimit, encodeFrame, FrameReader, MAX_ACK_LINE_BYTES, MAX_FRAME_BYTES, parseAck } from "../../../src/yarp/agents/ts/frame.ts"

test("a frame is an 8-byte big-endian length followed by the UTF-8 JSON body", () => {
  const frame = encodeFrame({ operation: "begin_call", text: "é" })
  const body = Buffer.from(JSON.stringify({ operation: "begin_call", text: "é" }), "utf8")
  assert.equal(frame.length, 8 + body.length)
  assert.equal(frame.readBigUInt64BE(0), BigInt(body.length))
  assert.deepEqual(frame.subarray(8), body)
  assert.deepEqual([...frame.subarray(0, 4)], [0, 0, 0, 0])
})

test("frames split at every byte position reassemble exactly", () => {
  const requests = [{ requestId: 1, a: "x".repeat(300) }, { requestId: 2, b: "ü€𝄞" }, { requestId: 3 }]
  const stream = Buffer.concat(requests.map((r) => encodeFrame(r)))
  for (let cut = 0; cut <= stream.length; cut += 7) {
    const reader = new FrameReader()
    const got = [...reader.feed(stream.subarray(0, cut)), ...reader.feed(stream.subarray(cut))]
    assert.deepEqual(got.map((body) => JSON.parse(body.toString("utf8"))), requests)
    assert.ok(reader.atBoundary)
  }
})

test("a length outside 1..256 MiB is refused before its body arrives", () => {
  for (const length of [0n, BigInt(MAX_FRAME_BYTES) + 1n, 2n ** 63n]) {
    const header = Buffer.alloc(8)
    header.writeBigUInt64BE(length, 0)
    assert.throws(() => new FrameReader().feed(header), /outside 1\.\./u)
  }
})

test("acknowledgement lines are split and validated", () => {
  const reader = new AckReader()
  assert.deepEqual(reader.feed('{"requestId":1,"ok":true,"archiveRef":"yr_0123456789abcdef0123456789abcdef"}\n{"requestId"'), [
    { requestId: 1, ok: true, archiveRef: "yr_0123456789abcdef0123456789abcdef" },
  ])
  assert.deepEqual(reader.feed(':2,"ok":false,"error":"bad\\u0007thing"}\n'), [{ requestId: 2, ok: false, error: "bad thing" }])
  assert.throws(() => parseAck('{"ok":true}'), /requestId/u)
  assert.throws(() => parseAck('{"requestId":1}'), /boolean ok/u)
  assert.throws(() => parseAck('{"requestId":1,"ok":true,"archiveRef":"yr_XYZ"}'), /archiveRef/u)
  assert.throws(() => parseAck("not json"), /not JSON/u)
})

test("an unterminated acknowledgement line over 64 KiB marks the bridge broken", () => {
  assert.throws(() => new AckReader().feed("x".repeat(70 * 1024)), /size limit/u)
})

test("a result_text's view comes back as text; its line may be as long as the cap it asked for allows", () => {
  const ref = "yr_0123456789abcdef0123456789abcdef"
  assert.deepEqual(parseAck(`{"requestId":4,"ok":true,"archiveRef":"${ref}","view":"a\\nb"}`), { requestId: 4, ok: true, archiveRef: ref, view: "a\nb" })
  assert.throws(() => parseAck(`{"requestId":4,"ok":true,"view":7}`), /view/u)
  assert.equal(ackLineLimit({ operation: "begin_call" }), MAX_ACK_LINE_BYTES)
  assert.equal(ackLineLimit({ operation: "result_text", capBytes: 65_536 }), MAX_ACK_LINE_BYTES + 6 * 65_536)
  const view = "v".repeat(200_000)
  const line = JSON.stringify({ requestId: 1, ok: true, view }) + "\n"
  const reader = new AckReader()
  reader.limit = ackLineLimit({ operation: "result_text", capBytes: 200_000 })
  const got = []
  for (let at = 0; at < line.length; at += 65_536) got.push(...reader.feed(line.slice(at, at + 65_536)))
  assert.deepEqual(got, [{ requestId: 1, ok: true, view }])
  assert.throws(() => new AckReader().feed(line.slice(0, 100_000)), /size limit/u)
})
