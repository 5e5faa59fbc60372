/**
 * opencode plugin: turns opencode's tool hooks into generic archive operations
 * sent through one `yarp archive ingest` child per opencode process (every session
 * of the process, subagents' included, names itself in each operation).
 *
 * Per tool call: `tool.execute.before` plans a bash rewrite, commits `begin_call`
 * (2 s at most) and only then rewrites the command in place; `tool.execute.after`
 * commits the raw result (the hook's `{title, output, metadata}`, or an MCP tool's
 * `{content, isError}`), the exact text over the cap (the broker answers with its
 * view of it), the staged visible result and the finished call, then writes the
 * view back into the hook's output; a call opencode ends with an error instead of
 * a result (no after hook: invalid arguments, a refused permission, a tool that
 * threw) is finished as not executed when its tool part reaches `error` (the
 * `event` hook). The sequence itself is the adapters' shared lifecycle
 * (../ts/lifecycle.ts).
 *
 * opencode awaits every hook, and an exception from one changes the call: thrown
 * before the tool, it blocks the call; thrown after it, it replaces the real result.
 * So no hook here ever throws, and archive failures follow the shared rules (the
 * tool runs unchanged, or a wrapped command's raw streams come back). Plugins load
 * for every opencode command (`export`, `session list`…), so nothing starts before
 * the first model request or tool call. It never opens the database, never writes
 * anywhere but the bridge's stdin, and never puts payloads in warnings.
 */

import { joinedText, resultCompleteness, type ContentBlock } from "../ts/content.ts"
import { IngestClient } from "../ts/ingest.ts"
import {
  beginCall,
  errorMessage,
  finishCall,
  finishUnexecuted,
  handshake,
  isRecord,
  localAccount,
  type Begun,
  type CallRecord,
  type Capture,
  type Finished,
  type ResultView,
} from "../ts/lifecycle.ts"
import { binaryPath, INSTALL_RECORD_URL, type YarpConfig } from "../ts/yarp-cli.ts"

export const AGENT = "opencode"
/** opencode's own agents that never call tools (their requests would name the wrong model). */
const HIDDEN_AGENTS = new Set(["title", "summary", "compaction"])

/** The part of opencode's plugin input this plugin uses (structurally typed for tests). */
export type PluginInputLike = {
  directory?: string
  client?: { app?: { log?: (options: { body: Record<string, unknown> }) => Promise<unknown> } }
}

export type PluginOptions = {
  /** The agent the archive records; defaults to opencode (a fork of opencode with its plugin API names itself). */
  agent?: string
  /** Environment for every yarp child; defaults to process.env. */
  env?: NodeJS.ProcessEnv
  /** Where warnings go; defaults to opencode's log (service `yarp`), else stderr. */
  warn?: (message: string) => void
  /** Local account recorded for every session; defaults to the OS user name. */
  account?: string
}

type Archive = { config: YarpConfig; client: IngestClient }

type Session = {
  sourceSessionId: string
  startedAtMs: number
  warned: Set<string>
  /** Calls between their before hook and their end; the promise settles once begin_call did. */
  calls: Map<string, Promise<Begun | null>>
  /** The model of the session's latest request from an agent that calls tools. */
  origin: { provider?: string; model?: string }
}

/** A JSON-safe copy (what the archive can store): undefined fields dropped, as opencode's store drops them. */
function jsonCopy(value: unknown): unknown {
  if (value === undefined) return null
  try {
    return JSON.parse(JSON.stringify(value)) as unknown
  } catch {
    return null
  }
}

/**
 * Whether a finished call is an error. bash reports its status only in
 * `metadata.exit`: non-zero is an error, and so is null (opencode killed the
 * command at its timeout). An MCP tool says `isError`; `invalid` is opencode's
 * answer to a tool the model named wrongly. Other tools fail by ending in `error`
 * instead (the `event` hook), so a result they return is not one.
 */
export function isErrorResult(tool: string, output: Record<string, unknown>): boolean {
  if (tool === "invalid") return true
  if (Array.isArray(output["content"])) return output["isError"] === true
  const metadata = output["metadata"]
  if (tool !== "bash" || !isRecord(metadata) || !("exit" in metadata)) return false
  const exit = metadata["exit"]
  return exit === null || (typeof exit === "number" && exit !== 0)
}

/** The result an ended-in-error tool part stands for: its error text, and metadata when it has some. */
export function errorResult(state: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { error: typeof state["error"] === "string" ? state["error"] : "" }
  if (state["metadata"] !== undefined) result["metadata"] = jsonCopy(state["metadata"])
  return result
}

/**
 * The after hook's output as the shared lifecycle sees it. Built-in tools give
 * `{title, output, metadata}` and the model gets `output`; MCP tools give the MCP
 * result, `{content, isError}`, and the model gets its text blocks. bash cut what it
 * shows (the tail, 2,000 lines or 50 KB) and names its spill file in
 * `metadata.outputPath`; that file is the approved source output, but opencode
 * 1.18.33 can write it short, so it never makes the text `complete`: the
 * completeness is opencode's own `metadata.truncated`.
 */
export function resultView(tool: string, args: unknown, output: Record<string, unknown>): ResultView {
  const raw = jsonCopy(output) as Record<string, unknown>
  const isError = isErrorResult(tool, output)
  const executedCommand = isRecord(args) ? args["command"] : undefined
  if (typeof output["output"] === "string") {
    const metadata = output["metadata"]
    const spill = isRecord(metadata) ? metadata["outputPath"] : undefined
    return {
      raw,
      content: [{ type: "text", text: output["output"] }],
      withContent: (content) => ({ ...raw, output: joinedText(content) }),
      isError,
      fullOutputPath: tool === "bash" && typeof spill === "string" && spill.startsWith("/") ? spill : undefined,
      completeness: resultCompleteness(metadata, undefined),
      executedCommand,
    }
  }
  if (Array.isArray(output["content"])) {
    return {
      raw,
      content: raw["content"] as ContentBlock[],
      withContent: (content) => ({ ...raw, content }),
      isError,
      completeness: "unknown",
      executedCommand,
    }
  }
  return { raw, content: [], withContent: () => raw, isError, completeness: "unknown", executedCommand }
}

/** Hand the outcome back to opencode: it reads the same output object after the hook. */
function apply(finished: Finished, output: Record<string, unknown>): void {
  if (finished.kind === "unchanged") return
  const text = finished.kind === "capped" ? joinedText(finished.content) : finished.text
  if (typeof output["output"] === "string") {
    output["output"] = text
  } else if (finished.kind === "capped" && Array.isArray(output["content"])) {
    output["content"].splice(0, output["content"].length, ...finished.content)
  }
}

export function createYarpPlugin(options: PluginOptions = {}) {
  return async function YarpPlugin(input: PluginInputLike = {}) {
    const env = options.env ?? process.env
    const bin = binaryPath(env, INSTALL_RECORD_URL)
    let account = options.account
    const directory = typeof input.directory === "string" ? input.directory : undefined
    const warn = (text: string) => {
      const line = `[yarp] ${text}`
      if (options.warn !== undefined) {
        options.warn(line)
        return
      }
      const log = input.client?.app?.log
      const fallback = () => process.stderr.write(`${line}\n`)
      if (typeof log !== "function") return void fallback()
      log.call(input.client?.app, { body: { service: "yarp", level: "warn", message: line } }).catch(fallback)
    }

    let ready: Promise<Archive | null> | null = null
    const archive = (): Promise<Archive | null> => {
      ready ??= (async () => {
        const shaken = await handshake(bin, env, "plugin")
        if ("disabled" in shaken) {
          warn(shaken.disabled)
          return null
        }
        const client = new IngestClient({ bin, env })
        client.start()
        return { config: shaken.config, client }
      })()
      return ready
    }

    const sessions = new Map<string, Session>()
    const sessionOf = (sourceSessionId: string): Session => {
      let found = sessions.get(sourceSessionId)
      if (found === undefined) {
        found = { sourceSessionId, startedAtMs: Date.now(), warned: new Set(), calls: new Map(), origin: {} }
        sessions.set(sourceSessionId, found)
      }
      return found
    }
    const captureOf = (current: Session, ready: Archive): Capture => ({
      client: ready.client,
      bin,
      env,
      config: ready.config,
      session: {
        agent: options.agent ?? AGENT,
        account: (account ??= localAccount()),
        sourceSessionId: current.sourceSessionId,
        startedAtMs: current.startedAtMs,
      },
      warnOnce: (kind, text) => {
        if (current.warned.has(kind)) return
        current.warned.add(kind)
        warn(text)
      },
    })
    const guarded = <A extends unknown[]>(name: string, hook: (...args: A) => Promise<void>) =>
      async (...args: A): Promise<void> => {
        try {
          await hook(...args)
        } catch (error) {
          // A throw would block the call (before) or replace its result (after).
          warn(`${name} failed; the call runs unchanged: ${errorMessage(error)}`)
        }
      }

    const before = async (hook: any, output: any): Promise<void> => {
      const { sessionID, callID, tool } = hook ?? {}
      const args = output?.args
      if (typeof sessionID !== "string" || typeof callID !== "string" || typeof tool !== "string" || !isRecord(args)) return
      const current = sessionOf(sessionID)
      const call: CallRecord = { sourceCallId: callID, toolName: tool, startedAtMs: Date.now(), ...current.origin }
      if (directory !== undefined) call.workingDirectory = directory
      const inputBefore = jsonCopy(args)
      if (!isRecord(inputBefore)) return // arguments JSON cannot carry: left uncaptured
      const started = (async () => {
        const ready = await archive()
        if (ready === null) return null
        const command = tool === "bash" && typeof args["command"] === "string" ? args["command"] : null
        return beginCall(captureOf(current, ready), call, inputBefore, command)
      })()
      // Awaited by the call's after hook or error event, which may never come: it must never reject.
      current.calls.set(callID, started.then((begun) => begun?.begun ?? null, () => null))
      const begun = await started
      // Only a durable begin_call lets the wrapped command run. opencode keeps
      // this args object: a replaced object would be ignored.
      if (begun?.rewritten != null) args["command"] = begun.rewritten
    }

    const after = async (hook: any, output: any): Promise<void> => {
      const { sessionID, callID, tool } = hook ?? {}
      const current = typeof sessionID === "string" ? sessions.get(sessionID) : undefined
      const pending = typeof callID === "string" ? current?.calls.get(callID) : undefined
      if (current === undefined || pending === undefined || !isRecord(output)) return
      current.calls.delete(callID)
      const begun = await pending
      const ready = await archive()
      if (begun === null || ready === null) return
      const finished = await finishCall(captureOf(current, ready), callID, begun, resultView(String(tool), hook.args, output))
      apply(finished, output)
    }

    const event = async ({ event: happened }: any): Promise<void> => {
      if (happened?.type === "session.idle") {
        const current = sessions.get(String(happened.properties?.sessionID))
        if (current !== undefined && current.calls.size === 0) sessions.delete(current.sourceSessionId)
        return
      }
      const part = happened?.type === "message.part.updated" ? happened.properties?.part : undefined
      if (!isRecord(part) || part["type"] !== "tool" || !isRecord(part["state"]) || part["state"]["status"] !== "error") return
      const current = sessions.get(String(part["sessionID"]))
      const callID = String(part["callID"])
      const pending = current?.calls.get(callID)
      if (current === undefined || pending === undefined) return
      current.calls.delete(callID)
      const begun = await pending
      const ready = await archive()
      if (begun === null || ready === null) return
      await finishUnexecuted(captureOf(current, ready), callID, errorResult(part["state"]), true)
    }

    return {
      // The first model request starts the handshake and the bridge, so that
      // broker start-up overlaps with the model's first turn.
      "chat.params": guarded("chat.params", async (hook: any) => {
        if (typeof hook?.sessionID !== "string" || HIDDEN_AGENTS.has(hook.agent)) return
        const model = hook.model
        const origin: Session["origin"] = {}
        if (typeof model?.providerID === "string") origin.provider = model.providerID
        if (typeof model?.id === "string") origin.model = model.id
        sessionOf(hook.sessionID).origin = origin
        void archive()
      }),
      "tool.execute.before": guarded("tool.execute.before", before),
      "tool.execute.after": guarded("tool.execute.after", after),
      event: guarded("event", event),
      dispose: guarded("dispose", async () => {
        const started = ready
        ready = Promise.resolve(null)
        await (await started)?.client.close()
      }),
    }
  }
}

export const YarpPlugin = createYarpPlugin()
