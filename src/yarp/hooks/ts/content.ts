/**
 * The global cap on text a tool result shows the model, and the completeness rule
 * for the exact text saved as its recovery source.
 *
 * The cap keeps whole lines by salience (failures with their blocks, then summaries
 * and headers, head and tail context, warnings, the rest), exactly as the Python
 * cap does: hooks/pi/test/cap.test.ts checks both against tests/vectors/cap.
 * Pure functions over Pi's content blocks. They never decide whether a call may be
 * capped (the caller does, after the recovery source is durable) and never touch
 * image blocks, which keep their order and do not count toward the budget.
 */

import { Buffer } from "node:buffer"
import { existsSync, readFileSync } from "node:fs"

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

/** The main marker's first two lines; it starts and ends with a newline. */
export function capMarker(
  sourceBytes: number,
  capBytes: number,
  archiveRef: string,
  source: string,
  completeness: SourceCompleteness,
  hint = "term|alternate",
): string {
  return (
    `\n[yarp: ${sourceBytes} byte(s) capped at ${capBytes}; ref=${archiveRef}; ${source} ${completeness}]\n`
    + `Search omitted output: yarp search ${archiveRef} '${hint}'\n`
  )
}

export type CapResult = {
  content: ContentBlock[]
  sourceText: string
  sourceBytes: number
}

// --- salience: the twin of src/yarp/view/salience.py, reading the same data file -------------

type SalienceData = {
  entries: { class: string; pattern: string; triggers: string[] }[]
  noise: string[]
  block: {
    continuation: string
    lead: string
    caret: string
    header_continuation: string
    max_lines: number
    max_lead: number
    header_max_lines: number
  }
}

const FAILURE_CLASSES = new Set(["failure", "exit", "traceback"])
const RANK: Record<string, number> = { failure: 0, exit: 0, traceback: 0, summary: 1, header: 1, location: 2, warning: 3 }
const COUNT_GROUPS: [string, Set<string>][] = [
  ["failure", FAILURE_CLASSES],
  ["summary", new Set(["summary", "header"])],
  ["warning", new Set(["warning"])],
]
const MAX_HINT_CHARS = 64
const MAX_HINT_WORDS = 4
/** Worded lines a hint reads per class group before it settles for the words it has (markers.py's MAX_HINT_LINES). */
const MAX_HINT_LINES = 1000
const MAX_MISSES = 64
const REDUCER_SUMMARY = "[yarp summary: "
const YARP_MARKER = "[yarp: "
const SEARCH_LINE = "Search omitted output: "
const CUT_NOTE = "[yarp: line "
const REDUCER_MARKER = "[yarp: omitted "

/** Python matches bytes: `.` must cross every character, so patterns compile with the `s` flag. */
const compile = (pattern: string) => new RegExp(pattern, "s")
const lowerAscii = (text: string) => text.replace(/[A-Z]+/g, (run) => run.toLowerCase())
const utf8Bytes = (text: string) => Buffer.byteLength(text, "utf8")

class Classifier {
  /** [class, its triggers, pattern] per entry, in data order. */
  readonly entries: [string, string[], RegExp][]
  readonly noise: RegExp
  readonly continuation: RegExp
  readonly lead: RegExp
  readonly caret: RegExp
  readonly headerContinuation: RegExp
  readonly maxLines: number
  readonly maxLead: number
  readonly headerMaxLines: number

  constructor(data: SalienceData) {
    this.entries = data.entries.map((entry) => [entry.class, entry.triggers.map((t) => t.toLowerCase()), compile(entry.pattern)])
    this.noise = compile(data.noise.map((p) => `(?:${p})`).join("|"))
    this.continuation = compile(data.block.continuation)
    this.lead = compile(data.block.lead)
    this.caret = compile(data.block.caret)
    this.headerContinuation = compile(data.block.header_continuation)
    this.maxLines = data.block.max_lines
    this.maxLead = data.block.max_lead
    this.headerMaxLines = data.block.header_max_lines
  }

  /** Entries whose triggers the line holds are tried; the leftmost match wins, ties to the earlier entry. */
  classify(line: string): string {
    const low = lowerAscii(line)
    let bestClass: string | undefined
    let bestStart = -1
    for (const [cls, triggers, pattern] of this.entries) {
      if (!triggers.some((trigger) => low.includes(trigger))) continue
      const match = pattern.exec(line)
      if (match !== null && (bestClass === undefined || match.index < bestStart)) {
        bestClass = cls
        bestStart = match.index
      }
    }
    if (bestClass !== undefined) return bestClass
    return this.noise.test(line) ? "noise" : "plain"
  }
}

let shipped: Classifier | undefined
/**
 * Where the salience data sits: beside this file once `yarp hook install pi` has
 * copied the extension into Pi's extensions folder, else in the Python package
 * this file ships in (`yarp/hooks/pi/` next to `yarp/rules/`).
 */
export const SALIENCE_DATA_URLS = [
  new URL("./salience.json", import.meta.url),
  new URL("../../rules/salience.json", import.meta.url),
]

function classifier(): Classifier {
  if (shipped === undefined) {
    const found = SALIENCE_DATA_URLS.find((url) => existsSync(url))
    if (found === undefined) throw new Error("the salience data (salience.json) is missing beside the extension")
    shipped = new Classifier(JSON.parse(readFileSync(found, "utf8")) as SalienceData)
  }
  return shipped
}

const isBlank = (line: string) => /^[ \t\r]*$/.test(line)

/** parts: the blocks merged into a unit, each as [start, first line of its core, anchor, end]. */
type Unit = { start: number; end: number; rank: number; parts: [number, number, number, number][] }

function blockUnits(lines: string[], classes: Map<number, string>, sal: Classifier): Unit[] {
  const total = lines.length
  const units: Unit[] = []
  const isSummaryOrHeader = (index: number) => {
    const cls = classes.get(index)
    return cls === "summary" || cls === "header"
  }
  for (const index of [...classes.keys()].sort((a, b) => a - b)) {
    const cls = classes.get(index)!
    if (FAILURE_CLASSES.has(cls) || cls === "warning" || cls === "location") {
      let start = index
      let back = index - 1
      let belowCaret = false
      while (back >= 0 && index - back <= sal.maxLead) {
        const line = lines[back]
        if (isSummaryOrHeader(back)) break
        if (!(belowCaret || isBlank(line) || sal.lead.test(line))) break
        belowCaret = sal.caret.test(line)
        start = back
        back -= 1
      }
      while (start < index && isBlank(lines[start])) start += 1
      let head = index
      if (cls === "location" && index > 0 && !isBlank(lines[index - 1])) {
        head = Math.min(start, index - 1) // the finding the location belongs to
        start = head
      }
      let end = index
      let forward = index + 1
      while (forward < total && forward - index <= sal.maxLines) {
        const line = lines[forward]
        const follows = classes.get(forward)
        if (isSummaryOrHeader(forward)) break
        if (sal.continuation.test(line) || (follows !== undefined && FAILURE_CLASSES.has(follows))
          || (cls === "warning" && follows === "warning")) {
          end = forward
          forward += 1
          continue
        }
        if (isBlank(line) && forward + 1 < total && forward + 1 - index <= sal.maxLines
          && !isSummaryOrHeader(forward + 1) && sal.continuation.test(lines[forward + 1])) {
          forward += 1
          continue
        }
        break
      }
      units.push({ start, end, rank: RANK[cls], parts: [[start, head, index, end]] })
    } else if (cls === "header") {
      let end = index
      let forward = index + 1
      while (forward < total && forward - index < sal.headerMaxLines) {
        const line = lines[forward]
        if (classes.has(forward)) break
        if (sal.headerContinuation.test(line)) {
          end = forward
        } else if (!isBlank(line)) {
          if ((line[0] === " " || line[0] === "\t") && lines[index].startsWith("commit ")) end = forward
          break
        }
        forward += 1
      }
      units.push({ start: index, end, rank: RANK[cls], parts: [[index, index, index, end]] })
    } else if (cls === "summary") {
      units.push({ start: index, end: index, rank: RANK[cls], parts: [[index, index, index, index]] })
    }
  }
  const merged: Unit[] = []
  for (const rank of [...new Set(units.map((u) => u.rank))].sort((a, b) => a - b)) {
    const group = units.filter((u) => u.rank === rank).sort((a, b) => a.start - b.start)
    const out: Unit[] = []
    for (const unit of group) {
      const last = out[out.length - 1]
      if (last !== undefined && unit.start <= last.end + (rank === 0 ? 1 : 0)) {
        last.end = Math.max(last.end, unit.end)
        last.parts.push(...unit.parts)
      } else {
        out.push(unit)
      }
    }
    merged.push(...out)
  }
  return merged
}

// --- the view: the twin of src/yarp/view/cap.py (and streams.py, markers.py) --------------

export function maxLineBytes(capBytes: number): number {
  return Math.max(64, Math.min(1024, Math.floor(capBytes / 4)))
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80
}

function utf8Floor(data: Buffer, limit: number): number {
  if (limit >= data.length) return data.length
  let cut = limit
  while (cut > 0 && isContinuation(data[cut])) cut -= 1
  return cut
}

class Stream {
  readonly lines: string[]
  readonly finalNewline: boolean
  readonly ranges: boolean
  readonly classes = new Map<number, string>()
  readonly shown = new Map<number, string>()
  /** Whether a line was shown cut short. */
  cut = false

  constructor(readonly name: string, text: string, sal: Classifier) {
    this.finalNewline = text.endsWith("\n")
    const body = this.finalNewline ? text.slice(0, -1) : text
    this.lines = text === "" ? [] : body.split("\n")
    // The text is a host's tool result: any markers in it (a `yarp run` view the agent's shell
    // printed) are known only by how they read, as `TextMarkers` in src/yarp/view/markers.py.
    this.ranges = !text.startsWith(REDUCER_SUMMARY)
    this.lines.forEach((line, index) => {
      // A reducer's own marker is kept or cut with its pair, never salient.
      if (line.startsWith(YARP_MARKER) || line.startsWith(SEARCH_LINE)) return
      const cls = sal.classify(line)
      if (cls !== "plain" && cls !== "noise") this.classes.set(index, cls)
    })
    if (!this.ranges) {
      // A reducer's first marker pair names the raw stream's recovery search: kept like a header.
      const first = this.lines.findIndex((line) => line.startsWith(REDUCER_MARKER))
      if (first >= 0) this.classes.set(first, "header")
    }
  }

  lineText(index: number, limit: number): string {
    const line = this.lines[index]
    const last = index === this.lines.length - 1 && !this.finalNewline
    const bytes = Buffer.from(line, "utf8")
    if (bytes.length > limit) {
      const cut = utf8Floor(bytes, limit)
      this.cut = true
      const note = `${CUT_NOTE}${index + 1} cut after ${cut} of ${bytes.length} byte(s)]`
      return bytes.subarray(0, cut).toString("utf8") + "\n" + note + (last ? "" : "\n")
    }
    return last ? line : line + "\n"
  }
}

function gaps(total: number, kept: Set<number>): [number, number][] {
  const out: [number, number][] = []
  let start = 0
  for (const index of [...kept].sort((a, b) => a - b)) {
    if (index > start) out.push([start, index - 1])
    start = index + 1
  }
  if (start < total) out.push([start, total - 1])
  return out
}

function gapMarker(stream: Stream, start: number, end: number): string {
  const count = end - start + 1
  if (stream.ranges) return `[yarp: omitted ${count} line(s); ${stream.name} ${start + 1}:${end + 1}]\n`
  return `[yarp: omitted ${count} line(s) of this view]\n`
}

class View {
  readonly kept: Set<number>[]
  readonly budget: number
  readonly limit: number
  used: number

  constructor(readonly streams: Stream[], capBytes: number, reserve: number) {
    this.limit = maxLineBytes(capBytes)
    this.kept = streams.map(() => new Set<number>())
    this.budget = capBytes - reserve
    this.used = streams.reduce((sum, _, n) => sum + this.gapsCost(n, this.kept[n]), 0)
  }

  cost(stream: number, index: number): number {
    const cache = this.streams[stream].shown
    let line = cache.get(index)
    if (line === undefined) {
      line = this.streams[stream].lineText(index, this.limit)
      cache.set(index, line)
    }
    return utf8Bytes(line)
  }

  gapsCost(number: number, kept: Set<number>): number {
    const stream = this.streams[number]
    return gaps(stream.lines.length, kept).reduce((sum, [s, e]) => sum + utf8Bytes(gapMarker(stream, s, e)), 0)
  }

  add(stream: number, indices: Iterable<number>): boolean {
    const kept = this.kept[stream]
    const fresh = [...indices].filter((i) => !kept.has(i))
    if (fresh.length === 0) return true
    const extra = fresh.reduce((sum, i) => sum + this.cost(stream, i), 0)
    if (this.used + extra > this.budget) return false
    const candidate = new Set([...kept, ...fresh])
    const delta = extra + this.gapsCost(stream, candidate) - this.gapsCost(stream, kept)
    if (this.used + delta > this.budget) return false
    this.kept[stream] = candidate
    this.used += delta
    return true
  }

  full(): boolean {
    return this.budget - this.used < 2
  }

  /**
   * Keep line `index` if its bytes fit under `ceiling` and the view fits, then the same for
   * the lines after it in the walk's direction (`step` 1 or -1) while they are context lines
   * (not kept, not in a run of noise, not a reducer's marker) and fit: the lines the walk
   * would keep one by one, counted in one step from their running byte total. Returns the
   * index the walk goes on from and whether a line was refused (which ends the walk).
   * Same arithmetic as `_View.add_run` in src/yarp/view/cap.py: past the first line only
   * the omitted run between the last added line and the next kept one (`outer`) changes,
   * and its marker moves by a few digits at most.
   */
  addRun(stream: number, index: number, step: number, ceiling: number, sal: Classifier): [number, boolean] {
    if (this.used + this.cost(stream, index) > ceiling || !this.add(stream, [index])) return [index, true]
    const source = this.streams[stream]
    const lines = source.lines
    const total = lines.length
    const kept = this.kept[stream]
    let first = index + step
    let outer = first
    while (outer >= 0 && outer < total && !kept.has(outer)) outer += step
    let available = (outer - first) * step
    const budget = this.budget
    const limit = Math.min(ceiling, budget)
    // The largest marker a run of this stream can have: a bound on how far a run's marker moves.
    const digitsOfOne = source.ranges ? 3 : 1
    const largest = utf8Bytes(gapMarker(source, 0, 0)) - digitsOfOne + String(total).length * digitsOfOne
    let size = 16 // lines looked at in the first window: most runs end in a few (or the view is full)
    for (;;) {
      const used = this.used
      const gap = gapBytes(source, first, outer, step)
      // A line costs a byte at least (its newline; only a last line without one may cost
      // nothing) and the run's marker can shrink by `gap` at most: more lines cannot fit.
      const count = Math.min(available, Math.max(0, limit - used + gap + 2), size)
      if (count === 0) return [first, false]
      const totals: number[] = []
      let sum = 0
      for (let offset = 0; offset < count; offset += 1) {
        sum += this.cost(stream, first + offset * step)
        totals.push(sum)
      }
      // Every line whose running total fits beside the largest marker fits (both tests below hold).
      let fits = upperBound(totals, limit - used + gap - largest)
      while (fits < count) {
        // Line `fits` is refused if its own bytes take `used` past the limit or, with the
        // run's marker re-measured, past the budget: the walk's two tests for one line.
        const added = totals[fits]
        const before = gapBytes(source, first + fits * step, outer, step)
        const after = gapBytes(source, first + (fits + 1) * step, outer, step)
        if (used + added + before - gap > limit || used + added + after - gap > budget) break
        fits += 1
      }
      // The lines up to the refused one must be context lines, as the walk would find them.
      let refused = fits < count
      let ended = refused
      for (let offset = 0; offset < Math.min(fits + 1, count); offset += 1) {
        const line = first + offset * step
        if (skippable(source, line, sal) || isMarkerLine(lines[line])) {
          fits = offset
          refused = false
          ended = true
          break
        }
      }
      if (fits > 0) {
        for (let offset = 0; offset < fits; offset += 1) kept.add(first + offset * step)
        this.used = used + totals[fits - 1] + gapBytes(source, first + fits * step, outer, step) - gap
        first += fits * step
        available -= fits
      }
      if (ended || fits < size) return [first, refused]
      size *= 2
    }
  }
}

/** Bytes of the marker for the omitted run from line `first` up to the kept line `outer` (exclusive), 0 if empty. */
function gapBytes(stream: Stream, first: number, outer: number, step: number): number {
  if (step > 0) return first < outer ? utf8Bytes(gapMarker(stream, first, outer - 1)) : 0
  return first > outer ? utf8Bytes(gapMarker(stream, outer + 1, first)) : 0
}

/** How many of the ascending `totals` are at most `value`. */
function upperBound(totals: number[], value: number): number {
  let low = 0
  let high = totals.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (totals[middle] <= value) low = middle + 1
    else high = middle
  }
  return low
}

const isMarkerLine = (line: string) => line.startsWith(YARP_MARKER) || line.startsWith(SEARCH_LINE)

const range = (start: number, end: number) => Array.from({ length: Math.max(0, end - start + 1) }, (_, i) => start + i)

function firstLastRest<T>(items: T[]): T[] {
  if (items.length < 2) return [...items]
  return [items[0], items[items.length - 1], ...items.slice(1, -1)]
}

function markerPair(stream: Stream, index: number): number[] {
  const lines = stream.lines
  if (lines[index].startsWith(YARP_MARKER) && index + 1 < lines.length && lines[index + 1].startsWith(SEARCH_LINE)) {
    return [index, index + 1]
  }
  if (lines[index].startsWith(SEARCH_LINE) && index > 0 && lines[index - 1].startsWith(YARP_MARKER)) {
    return [index - 1, index]
  }
  return [index]
}

function isNoise(stream: Stream, index: number, sal: Classifier): boolean {
  if (index < 0 || index >= stream.lines.length || stream.classes.has(index)) return false
  return sal.noise.test(stream.lines[index])
}

function skippable(stream: Stream, index: number, sal: Classifier): boolean {
  return isNoise(stream, index, sal) && (isNoise(stream, index - 1, sal) || isNoise(stream, index + 1, sal))
}

function context(view: View, headShare: number, tailShare: number, sal: Classifier): void {
  const streams = view.streams
  for (const [share, forward] of [[headShare, true], [tailShare, false]] as [number, boolean][]) {
    const start = view.used
    const numbers = forward ? range(0, streams.length - 1) : range(0, streams.length - 1).reverse()
    let stop = false
    for (const number of numbers) {
      const stream = streams[number]
      const total = stream.lines.length
      const step = forward ? 1 : -1
      let index = forward ? 0 : total - 1
      while (index >= 0 && index < total) {
        if (view.kept[number].has(index) || skippable(stream, index, sal)) {
          index += step
          continue
        }
        if (!isMarkerLine(stream.lines[index])) {
          const [next, refused] = view.addRun(number, index, step, start + share, sal)
          if (refused) {
            stop = true
            break
          }
          index = next
          continue
        }
        const pair = markerPair(stream, index)
        const needed = pair.filter((i) => !view.kept[number].has(i)).reduce((sum, i) => sum + view.cost(number, i), 0)
        if (view.used - start + needed > share || !view.add(number, pair)) {
          stop = true
          break
        }
        index += step
      }
      if (stop) break
    }
  }
}

type StreamUnit = Unit & { stream: number }

/**
 * The first and the last block whole; then every block's core (its anchor line, or a
 * location with its finding); then the other blocks whole; then, for blocks that did
 * not fit, each anchor's lead (location, source, caret) and its following lines one by one.
 */
function spendOnBlocks(view: View, blocks: StreamUnit[]): void {
  const order = firstLastRest(blocks)
  const whole = new Set<Unit>()
  for (const unit of order.slice(0, 2)) {
    if (!view.full() && view.add(unit.stream, range(unit.start, unit.end))) whole.add(unit)
  }
  let misses = 0
  const cores: [number, number, number][] = blocks.filter((u) => !whole.has(u))
    .flatMap((u) => u.parts.map(([, head, anchor]) => [u.stream, head, anchor] as [number, number, number]))
  for (const [stream, head, anchor] of firstLastRest(cores)) {
    if (misses >= MAX_MISSES || view.full()) break
    misses = view.add(stream, range(head, anchor)) ? 0 : misses + 1
  }
  misses = 0
  for (const unit of order.slice(2)) {
    if (misses >= MAX_MISSES || view.full()) break
    if (view.add(unit.stream, range(unit.start, unit.end))) {
      whole.add(unit)
      misses = 0
    } else {
      misses += 1
    }
  }
  const skipped = blocks.filter((u) => !whole.has(u))
  misses = 0
  outer: for (const unit of skipped) {
    for (const [start, , anchor] of unit.parts) {
      if (misses >= MAX_MISSES || view.full()) break outer
      misses = view.add(unit.stream, range(start, anchor)) ? 0 : misses + 1
    }
  }
  for (const unit of skipped) {
    for (const [, , anchor, end] of unit.parts) {
      for (let index = anchor + 1; index <= end; index += 1) {
        if (misses >= MAX_MISSES || view.full() || !view.add(unit.stream, [index])) {
          misses += 1
          break
        }
      }
    }
  }
}

function select(view: View, sal: Classifier): void {
  const streams = view.streams
  const units: StreamUnit[] = []
  streams.forEach((stream, number) => {
    for (const unit of blockUnits(stream.lines, stream.classes, sal)) units.push({ ...unit, stream: number })
  })
  spendOnBlocks(view, units.filter((u) => u.rank === 0))
  let misses = 0
  for (const unit of units) {
    if (unit.rank === 1 && misses < MAX_MISSES && !view.full()) {
      misses = view.add(unit.stream, range(unit.start, unit.end)) ? 0 : misses + 1
    }
  }
  spendOnBlocks(view, units.filter((u) => u.rank === 2))
  context(view, Math.floor(view.budget / 8), Math.floor(view.budget / 4), sal)
  misses = 0
  for (const unit of units) {
    if (unit.rank === 3 && misses < MAX_MISSES && !view.full()) {
      misses = view.add(unit.stream, range(unit.start, unit.end)) ? 0 : misses + 1
    }
  }
  context(view, view.budget, view.budget, sal)
}

function searchHint(streams: Stream[], kept: Set<number>[]): string {
  const word = /[A-Za-z_][A-Za-z0-9_]{2,}/
  const location = /^[ \t]*([^ \t:]+:\d+(:\d+)?:?[ \t]*)?/s
  for (const [, group] of [...COUNT_GROUPS, ["other", null] as [string, Set<string> | null]]) {
    const words: string[] = []
    let budget = MAX_HINT_LINES
    for (let number = 0; number < streams.length && words.length < MAX_HINT_WORDS && budget > 0; number += 1) {
      const stream = streams[number]
      const candidates = group === null ? range(0, stream.lines.length - 1) : [...stream.classes.keys()].sort((a, b) => a - b)
      for (const index of candidates) {
        if (kept[number].has(index)) continue
        const cls = stream.classes.get(index)
        const line = stream.lines[index]
        if (group === null) {
          if (cls !== undefined || line.startsWith(YARP_MARKER) || line.startsWith(SEARCH_LINE)) continue
        } else if (cls === undefined || !group.has(cls)) {
          continue
        }
        const skip = location.exec(line)![0].length
        const found = word.exec(line.slice(skip))
        if (found === null) continue
        const text = found[0]
        if (!words.includes(text) && [...words, text].join("|").length <= MAX_HINT_CHARS) words.push(text)
        budget -= 1
        if (words.length >= MAX_HINT_WORDS || budget === 0) break
      }
    }
    if (words.length > 0) return words.join("|")
  }
  return "."
}

function omittedCounts(streams: Stream[], kept: Set<number>[]): string {
  const counts = new Map(COUNT_GROUPS.map(([name]) => [name, 0]))
  let omitted = 0
  streams.forEach((stream, number) => {
    omitted += stream.lines.length - kept[number].size
    for (const [index, cls] of stream.classes) {
      if (kept[number].has(index)) continue
      for (const [name, group] of COUNT_GROUPS) if (group.has(cls)) counts.set(name, counts.get(name)! + 1)
    }
  })
  const parts = [...counts].filter(([, value]) => value > 0).map(([name, value]) => `${value} ${name}`)
  const other = omitted - [...counts.values()].reduce((a, b) => a + b, 0)
  if (other > 0) parts.push(`${other} other`)
  return parts.join(", ") || "0"
}

const details = (counts: string, exitCode: number | undefined) =>
  `[yarp: omitted ${counts} line(s)${exitCode === undefined ? "" : `; exit status ${exitCode}`}]\n`

/**
 * The salience-ordered view of named texts taken together, one output per text, or null
 * when they fit. Same algorithm and data as `cap_streams` in src/yarp/view/cap.py.
 */
export function capStreams(
  texts: [string, string][],
  capBytes: number,
  archiveRef: string,
  completeness: SourceCompleteness,
  exitCode?: number,
): string[] | null {
  const total = texts.reduce((sum, [, text]) => sum + utf8Bytes(text), 0)
  if (capBytes <= 0 || total <= capBytes) return null
  const sal = classifier()
  const streams = texts.map(([name, text]) => new Stream(name, text, sal))
  const totalLines = streams.reduce((sum, s) => sum + s.lines.length, 0)
  const worstCounts = ["failure", "summary", "warning", "other"].map((name) => `${totalLines} ${name}`).join(", ")
  const longestName = Math.max(...streams.map((s) => s.name.length))
  const reserve = utf8Bytes(capMarker(total, capBytes, archiveRef, "x".repeat(longestName), completeness, "x".repeat(MAX_HINT_CHARS)))
    + utf8Bytes(details(worstCounts, exitCode))
  const view = new View(streams, capBytes, reserve)
  if (view.budget - view.used > 0) select(view, sal)
  else view.kept.forEach((set) => set.clear())
  const out: string[] = []
  let mainPlaced = false
  let endsNewline = true
  streams.forEach((stream, number) => {
    const omitted = new Map(gaps(stream.lines.length, view.kept[number]))
    let text = ""
    let index = 0
    while (index < stream.lines.length) {
      const end = omitted.get(index)
      if (end !== undefined) {
        if (!endsNewline) text += "\n"
        if (!mainPlaced) {
          text += capMarker(total, capBytes, archiveRef, stream.name, completeness, searchHint(streams, view.kept)).slice(1)
          text += details(omittedCounts(streams, view.kept), exitCode)
          mainPlaced = true
        }
        text += gapMarker(stream, index, end)
        endsNewline = true
        index = end + 1
        continue
      }
      const line = stream.shown.get(index) ?? stream.lineText(index, view.limit)
      text += line
      endsNewline = line.endsWith("\n")
      index += 1
    }
    out.push(text)
  })
  if (!mainPlaced) {
    // Every line kept, some cut short: the marker follows the first cut line's stream.
    let number = streams.findIndex((stream) => stream.cut)
    if (number < 0) number = 0
    const tail = capMarker(total, capBytes, archiveRef, streams[number].name, completeness, searchHint(streams, view.kept)).slice(1)
    const ends = out[number].endsWith("\n") || out[number] === ""
    out[number] += (ends ? "" : "\n") + tail + details(omittedCounts(streams, view.kept), exitCode)
  }
  return out
}

/**
 * Apply the cap. Returns null when the joined text is at or under `capBytes`
 * (or the cap is 0, meaning disabled): the result must then stay untouched.
 * Over it, the view of the joined text replaces the text blocks as one block
 * at the first text block's place; other blocks keep their order.
 */
export function capContent(
  content: readonly ContentBlock[],
  capBytes: number,
  archiveRef: string,
  source: string,
  completeness: SourceCompleteness,
  exitCode?: number,
): CapResult | null {
  const sourceText = joinedText(content)
  const view = capStreams([[source, sourceText]], capBytes, archiveRef, completeness, exitCode)
  if (view === null) return null
  const capped: ContentBlock[] = []
  let placed = false
  for (const block of content) {
    if (!isTextBlock(block)) {
      capped.push(block)
    } else if (!placed) {
      capped.push({ ...block, text: view[0] })
      placed = true
    }
  }
  return { content: capped, sourceText, sourceBytes: utf8Bytes(sourceText) }
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
