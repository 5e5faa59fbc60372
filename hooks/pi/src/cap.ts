/**
 * The global cap on text a tool result shows the model, and the completeness rule
 * for the exact text saved as its recovery source.
 *
 * Pure functions over Pi's content blocks. They never decide whether a call may be
 * capped (the caller does, after the recovery source is durable) and never touch
 * image blocks, which keep their order and do not count toward the budget.
 */

import { Buffer } from "node:buffer"

export type TextBlock = { type: "text"; text: string }
export type ContentBlock = TextBlock | { type: string; [key: string]: unknown }
export type SourceCompleteness = "complete" | "incomplete" | "unknown"

export const DEFAULT_CAP_BYTES = 5120

export function isTextBlock(block: unknown): block is TextBlock {
  return (
    typeof block === "object"
    && block !== null
    && (block as Record<string, unknown>)["type"] === "text"
    && typeof (block as Record<string, unknown>)["text"] === "string"
  )
}

/** Text blocks joined without separators: the exact `result_text` the host produced. */
export function joinedText(content: readonly ContentBlock[]): string {
  return content.filter(isTextBlock).map((block) => block.text).join("")
}

export function capMarker(
  sourceBytes: number,
  capBytes: number,
  archiveRef: string,
  source: string,
  completeness: SourceCompleteness,
): string {
  return (
    `\n[yarp: ${sourceBytes} byte(s) capped at ${capBytes}; ref=${archiveRef}; ${source} ${completeness}]\n`
    + `Search omitted output: yarp search ${archiveRef} 'term|alternate'\n`
  )
}

export type CapResult = {
  content: ContentBlock[]
  sourceText: string
  sourceBytes: number
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80
}

/**
 * Apply the cap. Returns null when the joined text is at or under `capBytes`
 * (or the cap is 0, meaning disabled): the result must then stay untouched.
 */
export function capContent(
  content: readonly ContentBlock[],
  capBytes: number,
  archiveRef: string,
  source: string,
  completeness: SourceCompleteness,
): CapResult | null {
  if (capBytes === 0) return null
  const sourceText = joinedText(content)
  const bytes = Buffer.from(sourceText, "utf8")
  if (bytes.length <= capBytes) return null

  const marker = capMarker(bytes.length, capBytes, archiveRef, source, completeness)
  const budget = capBytes - Buffer.byteLength(marker, "utf8")
  if (budget < 0) throw new Error("output cap is smaller than its recovery marker")

  let headEnd = Math.floor(budget / 2)
  while (headEnd > 0 && isContinuation(bytes[headEnd])) headEnd -= 1
  let tailStart = bytes.length - (budget - headEnd)
  while (tailStart < bytes.length && isContinuation(bytes[tailStart])) tailStart += 1

  // Pieces of one original block stay one block (providers join blocks with separators).
  const capped: ContentBlock[] = []
  let offset = 0
  let markerPlaced = false
  for (const block of content) {
    if (!isTextBlock(block)) {
      capped.push(block)
      continue
    }
    const body = Buffer.from(block.text, "utf8")
    const start = offset
    const end = offset + body.length
    offset = end
    let text = ""
    if (start < headEnd) text += body.subarray(0, Math.min(end, headEnd) - start).toString("utf8")
    // The marker sits at the first omitted byte, i.e. in the block that holds headEnd.
    if (!markerPlaced && end > headEnd) {
      text += marker
      markerPlaced = true
    }
    if (end > tailStart) text += body.subarray(Math.max(start, tailStart) - start).toString("utf8")
    if (text !== "") capped.push({ ...block, text })
  }
  if (!markerPlaced) capped.push({ type: "text", text: marker })
  return { content: capped, sourceText, sourceBytes: bytes.length }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

/**
 * Completeness of a result's recovery source, by the contract's rule: complete when
 * the tool exposed a full output file; otherwise the boolean `truncated` in the
 * details (true → incomplete, false → complete); absent → unknown. Pi's built-in
 * tools report it as `details.truncation.truncated`, so that spelling counts too.
 */
export function resultCompleteness(details: unknown, fullOutputPath: string | undefined): SourceCompleteness {
  if (fullOutputPath !== undefined) return "complete"
  if (!isRecord(details)) return "unknown"
  let truncated: unknown = details["truncated"]
  if (typeof truncated !== "boolean" && isRecord(details["truncation"])) {
    truncated = details["truncation"]["truncated"]
  }
  if (truncated === true) return "incomplete"
  if (truncated === false) return "complete"
  return "unknown"
}

/** Pi's bash tool names its complete output file in `details.fullOutputPath`. */
export function fullOutputPathOf(toolName: string, details: unknown): string | undefined {
  if (toolName !== "bash" || !isRecord(details)) return undefined
  const path = details["fullOutputPath"]
  return typeof path === "string" && path.startsWith("/") ? path : undefined
}
