/**
 * Pi event translation: turns Pi's tool lifecycle into generic archive operations
 * sent through one `yarp archive ingest` child per Pi session.
 *
 * Per tool call: `tool_execution_start` notes the call; `tool_call` plans a bash
 * rewrite, commits `begin_call` (2 s at most) and only then rewrites the command;
 * `tool_result` commits the raw result, the exact text a cap needs, the staged
 * visible result and the finished call, then hands on the capped result; calls
 * that never reached the tool are finished at `tool_execution_end`.
 *
 * It must never make a tool depend on the archive: when initial capture fails the
 * original input runs with no capture, rewrite, pruning or cap (one warning per
 * session); when result capture fails, ordinary tools keep their unchanged result
 * and wrapped shell calls get their committed raw streams back. It never writes a
 * fallback store, never opens the database, and never puts payloads in warnings.
 */

import { userInfo } from "node:os"
import { capContent, fullOutputPathOf, joinedText, resultCompleteness, type ContentBlock } from "../ts/cap.ts"
import { BEGIN_CALL_TIMEOUT_MS, IngestClient, OTHER_TIMEOUT_MS } from "../ts/ingest.ts"
import {
  BinaryMissingError,
  binaryPath,
  parseConfig,
  parseVersion,
  planCommand,
  restoreStreams,
  runYarp,
  SUPPORTED_MAJOR,
  type ShellPlan,
  type SourceIdentity,
  type YarpConfig,
} from "../ts/yarp-cli.ts"

export const AGENT = "pi"
const HANDSHAKE_TIMEOUT_MS = 10_000
const PLAN_TIMEOUT_MS = 2_000
const RESTORE_TIMEOUT_MS = 30_000

/** The part of Pi's extension API this extension uses (structurally typed for tests). */
export type PiLike = {
  on(event: string, handler: (event: any, ctx: any) => unknown): void
}

export type ExtensionOptions = {
  /** Environment for every yarp child; defaults to process.env. */
  env?: NodeJS.ProcessEnv
  /** Where warnings go; defaults to Pi's UI notification, else stderr. */
  warn?: (message: string) => void
  /** Local account recorded for the session; defaults to the OS user name. */
  account?: string
}

type CallState =
  | { phase: "pending"; toolName: string; args: unknown; startedAtMs: number }
  | {
      phase: "begun"
      toolName: string
      archiveRef: string
      requiresStreams: boolean
      resultKind: ShellPlan["result"]["kind"]
      handedCommand: string | null
    }
  | { phase: "done" }

type Session = {
  sourceSessionId: string
  startedAtMs: number
  client: IngestClient
  calls: Map<string, CallState>
  models: Map<string, { provider?: string; model?: string }>
  warned: Set<string>
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

function localAccount(): string {
  try {
    return userInfo().username || "unknown"
  } catch {
    return process.env["USER"] ?? "unknown"
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Structured result snapshot: what Pi carries for a tool result, JSON-safe. */
function resultSnapshot(content: unknown, details: unknown, isError: boolean): Record<string, unknown> {
  return { content: content ?? [], details: details === undefined ? null : details, isError }
}

/** The install record `yarp hook install pi` writes at the root of the installed folder. */
export const INSTALL_RECORD_URL = new URL("../yarp-install.json", import.meta.url)

/**
 * Version and configuration handshake. Returns the configuration, or a warning
 * saying why the extension stays disabled.
 */
export async function handshake(
  bin: string,
  env: NodeJS.ProcessEnv,
): Promise<{ config: YarpConfig } | { disabled: string }> {
  try {
    const version = await runYarp(bin, ["--version"], HANDSHAKE_TIMEOUT_MS, env)
    if (version.code !== 0) return { disabled: `\`${bin} --version\` exited ${version.code}` }
    const parsed = parseVersion(version.stdout)
    if (parsed.major !== SUPPORTED_MAJOR) {
      return {
        disabled: `yarp ${parsed.major}.${parsed.minor}.${parsed.patch} is incompatible (this extension needs major version ${SUPPORTED_MAJOR})`,
      }
    }
    const shown = await runYarp(bin, ["config", "show", "--json"], HANDSHAKE_TIMEOUT_MS, env)
    if (shown.code !== 0) return { disabled: `\`yarp config show --json\` exited ${shown.code}` }
    return { config: parseConfig(shown.stdout) }
  } catch (error) {
    if (error instanceof BinaryMissingError) return { disabled: error.message }
    return { disabled: message(error) }
  }
}

export function createYarpExtension(options: ExtensionOptions = {}) {
  return async function yarpExtension(pi: PiLike): Promise<void> {
    const env = options.env ?? process.env
    const bin = binaryPath(env, INSTALL_RECORD_URL)
    const account = options.account ?? localAccount()
    let uiWarn: ((text: string) => void) | null = null
    const warn = (text: string) => {
      const line = `[yarp] ${text}`
      if (options.warn !== undefined) options.warn(line)
      else if (uiWarn !== null) uiWarn(line)
      else process.stderr.write(`${line}\n`)
    }

    const shaken = await handshake(bin, env)
    if ("disabled" in shaken) {
      warn(`extension disabled, tool calls are not archived: ${shaken.disabled}`)
      return
    }
    const config = shaken.config
    if (!config.archiveEnabled) {
      warn("archive.enabled is false in the yarp configuration; tool calls are not archived")
      return
    }

    let session: Session | null = null

    const warnOnce = (current: Session, kind: string, text: string) => {
      if (current.warned.has(kind)) return
      current.warned.add(kind)
      warn(text)
    }
    const identity = (current: Session, sourceCallId: string): SourceIdentity => ({
      agent: AGENT,
      account,
      sourceSessionId: current.sourceSessionId,
      sourceCallId,
    })
    const sessionObject = (current: Session) => ({
      agent: AGENT,
      account,
      sourceSessionId: current.sourceSessionId,
      startedAtMs: current.startedAtMs,
    })
    const callObject = (
      current: Session,
      toolCallId: string,
      toolName: string,
      startedAtMs: number,
      requiresStreams: boolean,
      ctx: any,
    ) => {
      const origin = current.models.get(toolCallId)
      const call: Record<string, unknown> = {
        sourceCallId: toolCallId,
        toolName,
        startedAtMs,
        requiresStreams,
      }
      const provider = origin?.provider ?? ctx?.model?.provider
      const model = origin?.model ?? ctx?.model?.id
      if (typeof provider === "string") call["provider"] = provider
      if (typeof model === "string") call["model"] = model
      if (typeof ctx?.cwd === "string") call["workingDirectory"] = ctx.cwd
      return call
    }

    async function closeSession(): Promise<void> {
      const current = session
      session = null
      await current?.client.close()
    }

    pi.on("session_start", async (_event, ctx) => {
      await closeSession()
      if (ctx?.hasUI === true && typeof ctx.ui?.notify === "function") {
        uiWarn = (text) => ctx.ui.notify(text, "warning")
      }
      const sourceSessionId = String(ctx?.sessionManager?.getSessionId?.() ?? "")
      if (sourceSessionId === "") {
        warn("Pi did not provide a session id; tool calls are not archived")
        return
      }
      const client = new IngestClient({ bin, env })
      session = {
        sourceSessionId,
        startedAtMs: Date.now(),
        client,
        calls: new Map(),
        models: new Map(),
        warned: new Set(),
      }
      client.start()
    })

    pi.on("session_shutdown", async () => {
      await closeSession()
    })

    // The assistant message that asked for a call names the model that emitted it.
    pi.on("message_end", (event) => {
      const current = session
      const msg = event?.message
      if (current === null || !isRecord(msg) || msg["role"] !== "assistant" || !Array.isArray(msg["content"])) return
      for (const item of msg["content"]) {
        if (isRecord(item) && item["type"] === "toolCall" && typeof item["id"] === "string") {
          current.models.set(item["id"], {
            provider: typeof msg["provider"] === "string" ? msg["provider"] : undefined,
            model: typeof msg["model"] === "string" ? msg["model"] : undefined,
          })
        }
      }
    })

    pi.on("tool_execution_start", (event) => {
      const current = session
      if (current === null || typeof event?.toolCallId !== "string") return
      current.calls.set(event.toolCallId, {
        phase: "pending",
        toolName: String(event.toolName),
        args: structuredClone(event.args ?? {}),
        startedAtMs: Date.now(),
      })
    })

    pi.on("tool_call", async (event, ctx) => {
      const current = session
      if (current === null) return undefined
      const toolCallId: string = event.toolCallId
      const toolName: string = event.toolName
      const prior = current.calls.get(toolCallId)
      const startedAtMs = prior?.phase === "pending" ? prior.startedAtMs : Date.now()
      const input = event.input as Record<string, unknown>
      const inputBefore = structuredClone(input)

      let plan: ShellPlan | null = null
      const command = toolName === "bash" && typeof input["command"] === "string" ? input["command"] : null
      if (command !== null && config.pruningEnabled && command.trim() !== "") {
        try {
          plan = await planCommand(bin, command, identity(current, toolCallId), PLAN_TIMEOUT_MS, env)
        } catch (error) {
          warnOnce(current, "plan", `shell planning failed; running commands unchanged: ${message(error)}`)
        }
      }
      const rewritten = plan?.execution.kind === "rewrite" && plan.execution.command !== command ? plan.execution.command : null
      const inputAfter = structuredClone(inputBefore)
      if (rewritten !== null) inputAfter["command"] = rewritten

      let ack
      try {
        ack = await current.client.request(
          {
            operation: "begin_call",
            session: sessionObject(current),
            call: callObject(current, toolCallId, toolName, startedAtMs, rewritten !== null, ctx),
            inputBefore,
            inputAfter,
            capturedAtMs: Date.now(),
          },
          BEGIN_CALL_TIMEOUT_MS,
        )
      } catch (error) {
        current.calls.set(toolCallId, { phase: "done" })
        warnOnce(
          current,
          "capture",
          `archive capture failed; running tool calls without capture, rewriting or caps: ${message(error)}`,
        )
        return undefined
      }
      if (ack.archiveRef === undefined) {
        current.calls.set(toolCallId, { phase: "done" })
        warnOnce(current, "capture", "archive capture returned no archive reference; running tool calls unchanged")
        return undefined
      }
      // Only a durable begin_call lets the wrapped command run.
      if (rewritten !== null) input["command"] = rewritten
      current.calls.set(toolCallId, {
        phase: "begun",
        toolName,
        archiveRef: ack.archiveRef,
        requiresStreams: rewritten !== null,
        resultKind: plan?.result.kind ?? "ordinary",
        handedCommand: rewritten ?? command,
      })
      return undefined
    })

    pi.on("tool_result", async (event) => {
      const current = session
      if (current === null) return undefined
      const toolCallId: string = event.toolCallId
      const state = current.calls.get(toolCallId)
      if (state?.phase !== "begun") return undefined
      current.calls.set(toolCallId, { phase: "done" })

      const content = (Array.isArray(event.content) ? event.content : []) as ContentBlock[]
      const isError = event.isError === true
      const fullOutputPath = fullOutputPathOf(event.toolName, event.details)
      const sessionRef = sessionObject(current)
      const executedCommand = isRecord(event.input) ? event.input["command"] : undefined
      // Another handler changed the command after us: what ran is not what we planned.
      const planHeld = state.handedCommand === null || executedCommand === state.handedCommand
      const capBytes = config.pruningEnabled && state.resultKind !== "recovery" && planHeld ? config.capBytes : 0

      try {
        const before: Record<string, unknown> = {
          operation: "result_before",
          session: sessionRef,
          sourceCallId: toolCallId,
          result: resultSnapshot(event.content, event.details, isError),
          capturedAtMs: Date.now(),
        }
        if (fullOutputPath !== undefined) before["fullOutputPath"] = fullOutputPath
        await current.client.request(before, OTHER_TIMEOUT_MS)

        const completeness = resultCompleteness(event.details, fullOutputPath)
        const capped = capContent(content, capBytes, state.archiveRef, "result_text", completeness)
        if (capped !== null) {
          // The exact text must be durable before any of it leaves the model's view.
          await current.client.request(
            {
              operation: "result_text",
              session: sessionRef,
              sourceCallId: toolCallId,
              text: joinedText(content),
              sourceCompleteness: completeness,
              capturedAtMs: Date.now(),
            },
            OTHER_TIMEOUT_MS,
          )
        }
        const visible = capped?.content ?? content
        const after = resultSnapshot(visible, event.details, isError)
        await current.client.request(
          {
            operation: "stage_result",
            session: sessionRef,
            sourceCallId: toolCallId,
            result: after,
            isError,
            capturedAtMs: Date.now(),
          },
          OTHER_TIMEOUT_MS,
        )
        await current.client.request(
          {
            operation: "finish_call",
            session: sessionRef,
            sourceCallId: toolCallId,
            result: after,
            isError,
            requirePreResult: true,
            finishedAtMs: Date.now(),
          },
          OTHER_TIMEOUT_MS,
        )
        return capped === null ? undefined : { content: capped.content }
      } catch (error) {
        warnOnce(current, "result", `result archive failed; the call stays incomplete: ${message(error)}`)
        if (!state.requiresStreams || !planHeld) return undefined
        try {
          const raw = await restoreStreams(bin, identity(current, toolCallId), RESTORE_TIMEOUT_MS, env)
          return { content: [{ type: "text", text: `${raw.stdout}${raw.stderr}` }], isError }
        } catch (restoreError) {
          warnOnce(current, "restore", `raw output restore failed; keeping the tool's output: ${message(restoreError)}`)
          return undefined
        }
      }
    })

    // Calls that never reached the tool (unknown tool, invalid arguments, blocked)
    // still get a record: begun with their input and finished as not executed.
    pi.on("tool_execution_end", async (event, ctx) => {
      const current = session
      if (current === null) return
      const toolCallId: string = event.toolCallId
      const state = current.calls.get(toolCallId)
      current.calls.delete(toolCallId)
      current.models.delete(toolCallId)
      if (state === undefined || state.phase === "done") return
      const result = isRecord(event.result) ? event.result : {}
      const isError = event.isError === true
      try {
        if (state.phase === "pending") {
          await current.client.request(
            {
              operation: "begin_call",
              session: sessionObject(current),
              call: callObject(current, toolCallId, state.toolName, state.startedAtMs, false, ctx),
              inputBefore: state.args,
              inputAfter: state.args,
              capturedAtMs: Date.now(),
            },
            BEGIN_CALL_TIMEOUT_MS,
          )
        }
        await current.client.request(
          {
            operation: "finish_call",
            session: sessionObject(current),
            sourceCallId: toolCallId,
            result: resultSnapshot(result["content"], result["details"], isError),
            isError,
            requirePreResult: false,
            finishedAtMs: Date.now(),
          },
          OTHER_TIMEOUT_MS,
        )
      } catch (error) {
        warnOnce(current, "result", `result archive failed; the call stays incomplete: ${message(error)}`)
      }
    })
  }
}
