/**
 * Pi event translation: turns Pi's tool lifecycle into generic archive operations
 * sent through one `yarp archive ingest` child per Pi session.
 *
 * Per tool call: `tool_execution_start` notes the call; `tool_call` plans a bash
 * rewrite, commits `begin_call` (2 s at most) and only then rewrites the command;
 * `tool_result` commits the raw result, the exact text over the cap (the broker
 * answers with its view of it), the staged visible result and the finished call,
 * then hands on that view; calls that never reached the tool are finished at
 * `tool_execution_end`. The sequence itself is the adapters' shared lifecycle
 * (../ts/lifecycle.ts).
 *
 * It must never make a tool depend on the archive: when initial capture fails the
 * original input runs with no capture, rewrite, pruning or cap (one warning per
 * session); when result capture fails, ordinary tools keep their unchanged result
 * and wrapped shell calls get their committed raw streams back. It never writes a
 * fallback store, never opens the database, and never puts payloads in warnings.
 */

import { resultCompleteness, type ContentBlock } from "../ts/content.ts"
import { IngestClient } from "../ts/ingest.ts"
import {
  beginCall,
  finishCall,
  finishUnexecuted,
  handshake,
  isRecord,
  localAccount,
  type Begun,
  type CallRecord,
  type Capture,
  type SessionRef,
} from "../ts/lifecycle.ts"
import { binaryPath, INSTALL_RECORD_URL } from "../ts/yarp-cli.ts"

export const AGENT = "pi"
export { INSTALL_RECORD_URL }

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
  | { phase: "begun"; begun: Begun }
  | { phase: "done" }

type Session = {
  capture: Capture
  calls: Map<string, CallState>
  models: Map<string, { provider?: string; model?: string }>
}

/** Structured result snapshot: what Pi carries for a tool result, JSON-safe. */
function resultSnapshot(content: unknown, details: unknown, isError: boolean): Record<string, unknown> {
  return { content: content ?? [], details: details === undefined ? null : details, isError }
}

/** Pi's bash tool names its complete output file in `details.fullOutputPath`. */
export function fullOutputPathOf(toolName: string, details: unknown): string | undefined {
  if (toolName !== "bash" || !isRecord(details)) return undefined
  const path = details["fullOutputPath"]
  return typeof path === "string" && path.startsWith("/") ? path : undefined
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

    const shaken = await handshake(bin, env, "extension")
    if ("disabled" in shaken) {
      warn(shaken.disabled)
      return
    }
    const config = shaken.config

    let session: Session | null = null

    const callRecord = (current: Session, toolCallId: string, toolName: string, startedAtMs: number, ctx: any): CallRecord => {
      const origin = current.models.get(toolCallId)
      const provider = origin?.provider ?? ctx?.model?.provider
      const model = origin?.model ?? ctx?.model?.id
      const call: CallRecord = { sourceCallId: toolCallId, toolName, startedAtMs }
      if (typeof provider === "string") call.provider = provider
      if (typeof model === "string") call.model = model
      if (typeof ctx?.cwd === "string") call.workingDirectory = ctx.cwd
      return call
    }

    async function closeSession(): Promise<void> {
      const current = session
      session = null
      await current?.capture.client.close()
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
      const ref: SessionRef = { agent: AGENT, account, sourceSessionId, startedAtMs: Date.now() }
      const warned = new Set<string>()
      const warnOnce = (kind: string, text: string) => {
        if (warned.has(kind)) return
        warned.add(kind)
        warn(text)
      }
      session = { capture: { client, bin, env, config, session: ref, warnOnce }, calls: new Map(), models: new Map() }
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
      const command = toolName === "bash" && typeof input["command"] === "string" ? input["command"] : null
      const call = callRecord(current, toolCallId, toolName, startedAtMs, ctx)
      const started = await beginCall(current.capture, call, structuredClone(input), command)
      if (started === null) {
        current.calls.set(toolCallId, { phase: "done" })
        return undefined
      }
      // Only a durable begin_call lets the wrapped command run.
      if (started.rewritten !== null) input["command"] = started.rewritten
      current.calls.set(toolCallId, { phase: "begun", begun: started.begun })
      return undefined
    })

    pi.on("tool_result", async (event) => {
      const current = session
      if (current === null) return undefined
      const toolCallId: string = event.toolCallId
      const state = current.calls.get(toolCallId)
      if (state?.phase !== "begun") return undefined
      current.calls.set(toolCallId, { phase: "done" })

      const isError = event.isError === true
      const fullOutputPath = fullOutputPathOf(event.toolName, event.details)
      const finished = await finishCall(current.capture, toolCallId, state.begun, {
        raw: resultSnapshot(event.content, event.details, isError),
        content: (Array.isArray(event.content) ? event.content : []) as ContentBlock[],
        withContent: (content) => resultSnapshot(content, event.details, isError),
        isError,
        fullOutputPath,
        completeness: resultCompleteness(event.details, fullOutputPath),
        executedCommand: isRecord(event.input) ? event.input["command"] : undefined,
      })
      if (finished.kind === "capped") return { content: finished.content }
      if (finished.kind === "restored") return { content: [{ type: "text", text: finished.text }], isError }
      return undefined
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
      const begin = state.phase === "pending"
        ? { call: callRecord(current, toolCallId, state.toolName, state.startedAtMs, ctx), input: state.args }
        : undefined
      await finishUnexecuted(current.capture, toolCallId, resultSnapshot(result["content"], result["details"], isError), isError, begin)
    })
  }
}
