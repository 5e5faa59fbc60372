/**
 * A tool result's content blocks as the adapters archive and show them: the
 * joined text (the exact `result_text` a view is cut from), where the view goes
 * among the blocks, and the completeness rule for that text.
 *
 * The view itself is YARP's, made by the broker from the committed text (the
 * acknowledgement of `result_text` with `capBytes`, see ./lifecycle.ts), so
 * every agent is shown the one view the Python side keeps. Pure functions over
 * a host's content blocks (an output string is one text block).
 */

export type TextBlock = { type: "text"; text: string }
export type ContentBlock = TextBlock | { type: string; [key: string]: unknown }
export type SourceCompleteness = "complete" | "incomplete" | "unknown"

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

/**
 * The blocks with `view` in place of their text: one text block at the first text
 * block's place; other blocks (images) keep their order. The rule of
 * `cap_blocks` in src/yarp/view/cap.py.
 */
export function withView(content: readonly ContentBlock[], view: string): ContentBlock[] {
  const out: ContentBlock[] = []
  let placed = false
  for (const block of content) {
    if (!isTextBlock(block)) {
      out.push(block)
    } else if (!placed) {
      out.push({ ...block, text: view })
      placed = true
    }
  }
  return out
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

/**
 * Completeness of a result's recovery source, by the contract's rule: complete when
 * the tool exposed a full output file; otherwise the boolean `truncated` in the
 * details (true → incomplete, false → complete); absent → unknown. Some hosts'
 * built-in tools report it as `details.truncation.truncated`, so that spelling counts too.
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
