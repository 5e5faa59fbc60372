/**
 * The ingest wire format: requests are 8-byte big-endian length-prefixed UTF-8 JSON
 * frames on the bridge's stdin; acknowledgements come back as one compact JSON
 * object per line on its stdout.
 *
 * This module only encodes and decodes. It never spawns processes, never decides
 * what to archive, and never puts request payloads into error text.
 */

import { Buffer } from "node:buffer"

export const FRAME_HEADER_BYTES = 8
/** Largest frame body the bridge accepts (256 MiB); larger requests fail locally. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024
/** Longest acknowledgement line we buffer before declaring the bridge broken, for an ack without a view. */
export const MAX_ACK_LINE_BYTES = 64 * 1024

/**
 * The longest acknowledgement line of a request: 64 KiB, and room for the view a
 * `result_text` with `capBytes` asks for (the view is at most about the cap; JSON
 * may write a control character as six).
 */
export function ackLineLimit(request: Record<string, unknown>): number {
  const cap = request["capBytes"]
  return MAX_ACK_LINE_BYTES + (request["operation"] === "result_text" && typeof cap === "number" ? 6 * cap : 0)
}

export class FrameTooLargeError extends Error {
  constructor(readonly size: number) {
    super(`archive request of ${size} bytes exceeds the ${MAX_FRAME_BYTES}-byte frame limit`)
  }
}

/** Encode one request object as a length-prefixed frame. */
export function encodeFrame(request: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(request), "utf8")
  if (body.length < 1 || body.length > MAX_FRAME_BYTES) throw new FrameTooLargeError(body.length)
  const header = Buffer.alloc(FRAME_HEADER_BYTES)
  header.writeBigUInt64BE(BigInt(body.length), 0)
  return Buffer.concat([header, body])
}

/**
 * Split a byte stream into frame bodies. Used by test peers that play the bridge;
 * a length outside 1..MAX_FRAME_BYTES is refused before any allocation.
 */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0)

  feed(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const frames: Buffer[] = []
    for (;;) {
      if (this.pending.length < FRAME_HEADER_BYTES) return frames
      const length = this.pending.readBigUInt64BE(0)
      if (length < 1n || length > BigInt(MAX_FRAME_BYTES)) {
        throw new Error(`frame length ${length} is outside 1..${MAX_FRAME_BYTES}`)
      }
      const end = FRAME_HEADER_BYTES + Number(length)
      if (this.pending.length < end) return frames
      frames.push(this.pending.subarray(FRAME_HEADER_BYTES, end))
      this.pending = this.pending.subarray(end)
    }
  }

  /** True when the stream stopped exactly at a frame boundary. */
  get atBoundary(): boolean {
    return this.pending.length === 0
  }
}

export type Ack = {
  requestId: number
  ok: boolean
  archiveRef?: string
  /** The view of the text a `result_text` with `capBytes` committed (absent when it fits the cap). */
  view?: string
  error?: string
}

/** Collects stdout bytes and yields each complete acknowledgement line, parsed. */
export class AckReader {
  private pending = ""
  /** Longest line accepted, in UTF-16 code units (each at least one byte): set per request (`ackLineLimit`). */
  limit = MAX_ACK_LINE_BYTES

  feed(chunk: string): Ack[] {
    this.pending += chunk
    if (!chunk.includes("\n")) {
      // Most of a long line (a view): only the new chunk is searched.
      if (this.pending.length > this.limit) {
        throw new Error("archive bridge sent an acknowledgement line over its size limit")
      }
      return []
    }
    const acks: Ack[] = []
    let newline = this.pending.indexOf("\n")
    while (newline !== -1) {
      const line = this.pending.slice(0, newline)
      this.pending = this.pending.slice(newline + 1)
      if (line.trim() !== "") acks.push(parseAck(line))
      newline = this.pending.indexOf("\n")
    }
    if (this.pending.length > this.limit) {
      throw new Error("archive bridge sent an acknowledgement line over its size limit")
    }
    return acks
  }
}

const ARCHIVE_REF = /^yr_[0-9a-f]{32}$/u

export function isArchiveRef(value: unknown): value is string {
  return typeof value === "string" && ARCHIVE_REF.test(value)
}

export function parseAck(line: string): Ack {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new Error("archive bridge sent an acknowledgement that is not JSON")
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("archive bridge sent an acknowledgement that is not an object")
  }
  const record = value as Record<string, unknown>
  const requestId = record["requestId"]
  if (typeof requestId !== "number" || !Number.isSafeInteger(requestId) || requestId < 0) {
    throw new Error("archive bridge acknowledgement has no valid requestId")
  }
  if (typeof record["ok"] !== "boolean") {
    throw new Error("archive bridge acknowledgement has no boolean ok")
  }
  const ack: Ack = { requestId, ok: record["ok"] }
  if (record["archiveRef"] !== undefined) {
    if (!isArchiveRef(record["archiveRef"])) {
      throw new Error("archive bridge acknowledgement has a malformed archiveRef")
    }
    ack.archiveRef = record["archiveRef"]
  }
  if (record["view"] !== undefined) {
    if (typeof record["view"] !== "string") throw new Error("archive bridge acknowledgement has a view that is not text")
    ack.view = record["view"]
  }
  if (typeof record["error"] === "string") ack.error = boundedText(record["error"])
  return ack
}

/** Bound a diagnostic to 1,024 characters with control characters replaced. */
export function boundedText(text: string, limit = 1024): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]/gu, " ").trim()
  return clean.length <= limit ? clean : `${clean.slice(0, limit - 1)}…`
}
