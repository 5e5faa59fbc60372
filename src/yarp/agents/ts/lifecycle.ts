/**
 * The tool-call lifecycle the TypeScript adapters share, over the generic archive
 * operations: begin a call (planning a shell command and rewriting it only once
 * `begin_call` is durable), finish an executed call (raw result, the exact text a
 * cap needs with YARP's view of it, the staged visible result, the finished call)
 * and finish a call that never reached its tool. Each agent's adapter keeps its own
 * event translation and result shapes and hands them to these functions.
 *
 * It must never make a tool depend on the archive: a failed begin leaves the call
 * running unchanged (no rewrite, no cap), a failed result capture leaves ordinary
 * results unchanged and gives a wrapped shell call its committed raw streams back.
 * It never throws for an archive failure (it warns, once per kind, through the
 * caller) and never puts payloads in warnings.
 */

import { Buffer } from "node:buffer"
import { execFileSync } from "node:child_process"
import { userInfo } from "node:os"
import { joinedText, withView, type ContentBlock, type SourceCompleteness } from "./content.ts"
import { BEGIN_CALL_TIMEOUT_MS, OTHER_TIMEOUT_MS, type IngestClient } from "./ingest.ts"
import {
  parseConfig,
  parseVersion,
  planCommand,
  restoreStreams,
  runYarp,
  SUPPORTED_MAJOR,
  type ShellPlan,
  type SourceIdentity,
  type YarpConfig,
} from "./yarp-cli.ts"

const HANDSHAKE_TIMEOUT_MS = 10_000
const PLAN_TIMEOUT_MS = 2_000
const RESTORE_TIMEOUT_MS = 30_000

/** The session a call belongs to, as every operation names it. */
export type SessionRef = { agent: string; account: string; sourceSessionId: string; startedAtMs: number }

/** The call record `begin_call` commits (optional fields only when the agent knows them). */
export type CallRecord = {
  sourceCallId: string
  toolName: string
  startedAtMs: number
  provider?: string
  model?: string
  workingDirectory?: string
}

/** What one call's operations go through: the session's bridge, the yarp to run, its configuration. */
export type Capture = {
  client: IngestClient
  bin: string
  env: NodeJS.ProcessEnv
  config: YarpConfig
  session: SessionRef
  /** Report an archive problem; the caller keeps it to one warning per kind and session. */
  warnOnce: (kind: string, text: string) => void
}

/** A call whose `begin_call` is durable: what its result capture needs to know. */
export type Begun = {
  archiveRef: string
  requiresStreams: boolean
  resultKind: ShellPlan["result"]["kind"]
  /** The shell command handed on (the rewrite, else the original), or null for another tool. */
  handedCommand: string | null
}

/** An executed call's result as the adapter sees it. */
export type ResultView = {
  /** The result snapshot exactly as the agent produced it. */
  raw: unknown
  /** Its content blocks: the text blocks are what the view is cut from. */
  content: readonly ContentBlock[]
  /** The visible result snapshot with `content` replaced by the capped blocks. */
  withContent: (content: ContentBlock[]) => unknown
  isError: boolean
  /** The agent's complete output file, approved by the adapter, stored as `source_output/before`. */
  fullOutputPath?: string
  /** Completeness of the text a cap keeps as `result_text/before`. */
  completeness: SourceCompleteness
  /** The shell command that ran: when it is not the one handed on, another handler changed it. */
  executedCommand?: unknown
}

/** What the adapter hands back to its agent: nothing new, the capped blocks, or the raw streams. */
export type Finished = { kind: "unchanged" } | { kind: "capped"; content: ContentBlock[] } | { kind: "restored"; text: string }

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The OS account recorded for every session: the user database's name of this
 * process's user, as `yarp import` records it, else the numeric user id. Bun
 * (an agent's runtime) answers "unknown" without asking the user database, so
 * then `id -un` does (once per adapter).
 */
export function localAccount(): string {
  try {
    const name = userInfo().username
    if (name !== "" && name !== "unknown") return name
  } catch {
    // No entry for this user: `id` says so too.
  }
  try {
    const name = execFileSync("id", ["-un"], { encoding: "utf8", timeout: 5_000, stdio: ["ignore", "pipe", "ignore"] }).trim()
    if (name !== "") return name
  } catch {
    // Not in the user database.
  }
  return String(process.geteuid?.() ?? "unknown")
}

/**
 * Version and configuration handshake. Returns the configuration, or the warning
 * saying why the adapter (`what`: "extension", "plugin") stays off.
 */
export async function handshake(
  bin: string,
  env: NodeJS.ProcessEnv,
  what: string,
): Promise<{ config: YarpConfig } | { disabled: string }> {
  const off = (why: string) => ({ disabled: `${what} disabled, tool calls are not archived: ${why}` })
  try {
    const version = await runYarp(bin, ["--version"], HANDSHAKE_TIMEOUT_MS, env)
    if (version.code !== 0) return off(`\`${bin} --version\` exited ${version.code}`)
    const parsed = parseVersion(version.stdout)
    if (parsed.major !== SUPPORTED_MAJOR) {
      return off(
        `yarp ${parsed.major}.${parsed.minor}.${parsed.patch} is incompatible (this ${what} needs major version ${SUPPORTED_MAJOR})`,
      )
    }
    const shown = await runYarp(bin, ["config", "show", "--json"], HANDSHAKE_TIMEOUT_MS, env)
    if (shown.code !== 0) return off(`\`yarp config show --json\` exited ${shown.code}`)
    const config = parseConfig(shown.stdout)
    if (!config.archiveEnabled) {
      return { disabled: "archive.enabled is false in the yarp configuration; tool calls are not archived" }
    }
    return { config }
  } catch (error) {
    return off(errorMessage(error))
  }
}

function identity(capture: Capture, sourceCallId: string): SourceIdentity {
  const { agent, account, sourceSessionId } = capture.session
  return { agent, account, sourceSessionId, sourceCallId }
}

function callObject(call: CallRecord, requiresStreams: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    sourceCallId: call.sourceCallId,
    toolName: call.toolName,
    startedAtMs: call.startedAtMs,
    requiresStreams,
  }
  for (const key of ["provider", "model", "workingDirectory"] as const) {
    if (typeof call[key] === "string") out[key] = call[key]
  }
  return out
}

/**
 * The plan's `yarp run …` run by `bin`, the yarp this adapter runs (`YARP_BIN`, else the
 * one that installed it): the agent's shell may not have `yarp` on its PATH (an install
 * in a virtual environment), as the Python hooks' rewrite names their own launcher.
 */
export function runsWith(bin: string, command: string): string {
  if (bin === "yarp" || !command.startsWith("yarp ")) return command
  return `'${bin.replaceAll("'", "'\\''")}'${command.slice("yarp".length)}`
}

/**
 * Plan the shell `command` (null for another tool), commit `begin_call` within 2 s
 * and return what the call runs with: the rewritten command, or null to run it
 * unchanged. Returns null when initial capture failed (warned): the call then runs
 * with its original input, uncaptured and uncapped.
 */
export async function beginCall(
  capture: Capture,
  call: CallRecord,
  inputBefore: Record<string, unknown>,
  command: string | null,
): Promise<{ begun: Begun; rewritten: string | null } | null> {
  const { config, bin, env } = capture
  let plan: ShellPlan | null = null
  if (command !== null && config.pruningEnabled && command.trim() !== "") {
    try {
      plan = await planCommand(bin, command, identity(capture, call.sourceCallId), PLAN_TIMEOUT_MS, env)
    } catch (error) {
      capture.warnOnce("plan", `shell planning failed; running commands unchanged: ${errorMessage(error)}`)
    }
  }
  // The plan names `bin` itself (`--launcher`); `runsWith` still serves a plan that starts with bare `yarp`.
  const rewritten = plan?.execution.kind === "rewrite" && plan.execution.command !== command
    ? runsWith(bin, plan.execution.command) : null
  // A compound rewrite's wrapped commands record their own calls: this one holds no streams.
  const requiresStreams = rewritten !== null && plan?.execution.kind === "rewrite" && plan.execution.wrapped === "whole"
  const inputAfter = structuredClone(inputBefore)
  if (rewritten !== null) inputAfter["command"] = rewritten
  let ack
  try {
    ack = await capture.client.request(
      {
        operation: "begin_call",
        session: capture.session,
        call: callObject(call, requiresStreams),
        inputBefore,
        inputAfter,
        capturedAtMs: Date.now(),
      },
      BEGIN_CALL_TIMEOUT_MS,
    )
  } catch (error) {
    capture.warnOnce(
      "capture",
      `archive capture failed; running tool calls without capture, rewriting or caps: ${errorMessage(error)}`,
    )
    return null
  }
  if (ack.archiveRef === undefined) {
    capture.warnOnce("capture", "archive capture returned no archive reference; running tool calls unchanged")
    return null
  }
  return {
    begun: {
      archiveRef: ack.archiveRef,
      requiresStreams,
      resultKind: plan?.result.kind ?? "ordinary",
      handedCommand: rewritten ?? command,
    },
    rewritten,
  }
}

/**
 * Archive an executed call's result and finish it: `result_before` (with the full
 * output file), the exact text when it is over the cap (`result_text` with
 * `capBytes`: its acknowledgement, sent once the text is durable, carries YARP's view
 * of it, made by the broker), the staged visible result, then `finish_call`.
 * Returns what the agent should show instead of its own result; on an archive
 * failure, the raw streams of a wrapped shell call, else nothing.
 */
export async function finishCall(capture: Capture, sourceCallId: string, begun: Begun, view: ResultView): Promise<Finished> {
  const { client, config, session } = capture
  // Another handler changed the command after us: what ran is not what we planned.
  const planHeld = begun.handedCommand === null || view.executedCommand === begun.handedCommand
  const capBytes = config.pruningEnabled && begun.resultKind !== "recovery" && planHeld ? config.capBytes : 0
  try {
    const before: Record<string, unknown> = {
      operation: "result_before",
      session,
      sourceCallId,
      result: view.raw,
      capturedAtMs: Date.now(),
    }
    if (view.fullOutputPath !== undefined) before["fullOutputPath"] = view.fullOutputPath
    await client.request(before, OTHER_TIMEOUT_MS)

    let capped: ContentBlock[] | null = null
    const text = capBytes > 0 ? joinedText(view.content) : ""
    if (capBytes > 0 && Buffer.byteLength(text, "utf8") > capBytes) {
      // The exact text is durable before any of it leaves the model's view: the
      // broker makes the view only once it committed the text, and acknowledges both.
      const ack = await client.request(
        {
          operation: "result_text",
          session,
          sourceCallId,
          text,
          sourceCompleteness: view.completeness,
          capturedAtMs: Date.now(),
          capBytes,
        },
        OTHER_TIMEOUT_MS,
      )
      if (ack.view !== undefined) capped = withView(view.content, ack.view)
    }
    const after = capped === null ? view.raw : view.withContent(capped)
    const isError = view.isError
    await client.request(
      { operation: "stage_result", session, sourceCallId, result: after, isError, capturedAtMs: Date.now() },
      OTHER_TIMEOUT_MS,
    )
    await client.request(
      {
        operation: "finish_call",
        session,
        sourceCallId,
        result: after,
        isError,
        requirePreResult: true,
        finishedAtMs: Date.now(),
      },
      OTHER_TIMEOUT_MS,
    )
    return capped === null ? { kind: "unchanged" } : { kind: "capped", content: capped }
  } catch (error) {
    capture.warnOnce("result", `result archive failed; the call stays incomplete: ${errorMessage(error)}`)
    if (!begun.requiresStreams || !planHeld) return { kind: "unchanged" }
    try {
      const raw = await restoreStreams(capture.bin, identity(capture, sourceCallId), RESTORE_TIMEOUT_MS, capture.env)
      return { kind: "restored", text: `${raw.stdout}${raw.stderr}` }
    } catch (restoreError) {
      capture.warnOnce("restore", `raw output restore failed; keeping the tool's output: ${errorMessage(restoreError)}`)
      return { kind: "unchanged" }
    }
  }
}

/**
 * Finish a call that never reached its tool (unknown tool, invalid arguments,
 * blocked, refused) as not executed; `begin` commits its record first when the
 * adapter had not begun it.
 */
export async function finishUnexecuted(
  capture: Capture,
  sourceCallId: string,
  result: unknown,
  isError: boolean,
  begin?: { call: CallRecord; input: unknown },
): Promise<void> {
  const { client, session } = capture
  try {
    if (begin !== undefined) {
      await client.request(
        {
          operation: "begin_call",
          session,
          call: callObject(begin.call, false),
          inputBefore: begin.input,
          inputAfter: begin.input,
          capturedAtMs: Date.now(),
        },
        BEGIN_CALL_TIMEOUT_MS,
      )
    }
    await client.request(
      {
        operation: "finish_call",
        session,
        sourceCallId,
        result,
        isError,
        requirePreResult: false,
        finishedAtMs: Date.now(),
      },
      OTHER_TIMEOUT_MS,
    )
  } catch (error) {
    capture.warnOnce("result", `result archive failed; the call stays incomplete: ${errorMessage(error)}`)
  }
}
