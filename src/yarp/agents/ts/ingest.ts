/**
 * The per-session `yarp archive ingest` child and its request/acknowledgement loop.
 *
 * Requests go out strictly one at a time; each waits for its own acknowledgement
 * with a deadline (2 s for begin_call, 30 s for the rest, queue time included).
 * A timed-out, broken or exited bridge is killed and replaced on the next request,
 * so a late acknowledgement can never be matched to a newer request. This module
 * never replays requests (the bridge owns replay) and never writes anywhere but the
 * child's stdin.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { AckReader, ackLineLimit, boundedText, encodeFrame, type Ack } from "./frame.ts"

export const BEGIN_CALL_TIMEOUT_MS = 2_000
export const OTHER_TIMEOUT_MS = 30_000
/** Do not send a request with less than this left: the bridge would reject it as expired. */
const MIN_SEND_MARGIN_MS = 100
const CLOSE_GRACE_MS = 5_000
const STDERR_TAIL_CHARS = 1024

export class ArchiveRejected extends Error {}
export class ArchiveUnavailable extends Error {}

type Waiter = {
  requestId: number
  resolve: (ack: Ack) => void
  reject: (error: Error) => void
}

class Bridge {
  readonly child: ChildProcessWithoutNullStreams
  private readonly acks = new AckReader()
  private waiter: Waiter | null = null
  private stderrTail = ""
  exited = false
  nextRequestId = 1

  constructor(bin: string, env: NodeJS.ProcessEnv) {
    this.child = spawn(bin, ["archive", "ingest"], { env, stdio: ["pipe", "pipe", "pipe"] })
    // The bridge must never keep the agent alive on its own; shutdown closes it explicitly.
    this.child.unref()
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      ;(stream as unknown as { unref?: () => void }).unref?.()
    }
    this.child.stdout.setEncoding("utf8")
    this.child.stderr.setEncoding("utf8")
    this.child.stdout.on("data", (chunk: string) => {
      let acks: Ack[]
      try {
        acks = this.acks.feed(chunk)
      } catch (error) {
        this.fail(error as Error)
        return
      }
      for (const ack of acks) this.deliver(ack)
    })
    this.child.stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS)
    })
    this.child.stdin.on("error", () => {
      // EPIPE after the bridge died; the exit handler reports it.
    })
    this.child.on("error", (error: NodeJS.ErrnoException) => {
      this.exited = true
      const reason = error.code === "ENOENT" ? "yarp binary not found" : `cannot start yarp archive ingest (${error.code ?? "error"})`
      this.fail(new ArchiveUnavailable(reason))
    })
    this.child.on("exit", (code, signal) => {
      this.exited = true
      const detail = boundedText(this.stderrTail, 300)
      this.fail(
        new ArchiveUnavailable(
          `yarp archive ingest exited (${signal ?? `status ${code}`})${detail === "" ? "" : `: ${detail}`}`,
        ),
      )
    })
  }

  private deliver(ack: Ack): void {
    const waiter = this.waiter
    if (waiter === null || ack.requestId !== waiter.requestId) {
      this.fail(new ArchiveUnavailable("archive bridge acknowledged a request that was not pending"))
      return
    }
    this.waiter = null
    waiter.resolve(ack)
  }

  private fail(error: Error): void {
    const waiter = this.waiter
    this.waiter = null
    waiter?.reject(error)
    if (!this.exited) this.kill()
  }

  kill(): void {
    this.exited = true
    try {
      this.child.kill("SIGKILL")
    } catch {
      // Already gone.
    }
  }

  /** Send one frame; `timeoutMs` is the time left, `budgetMs` the whole deadline the error names. */
  send(request: Record<string, unknown>, timeoutMs: number, budgetMs: number = timeoutMs): Promise<Ack> {
    const requestId = this.nextRequestId
    this.nextRequestId += 1
    const frame = encodeFrame({ ...request, requestId, schemaVersion: 1 })
    return new Promise<Ack>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null
        this.kill()
        reject(new ArchiveUnavailable(`archive acknowledgement timed out after ${budgetMs} ms`))
      }, timeoutMs)
      // This ref'd timer is what keeps the event loop alive while an ack is awaited.
      this.waiter = {
        requestId,
        resolve: (ack) => {
          clearTimeout(timer)
          resolve(ack)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        },
      }
      this.acks.limit = ackLineLimit(request)
      this.child.stdin.write(frame)
    })
  }

  async close(): Promise<void> {
    if (this.exited) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.kill()
        resolve()
      }, CLOSE_GRACE_MS)
      this.child.once("exit", () => {
        clearTimeout(timer)
        resolve()
      })
      // EOF at a frame boundary: the bridge exits 0.
      this.child.stdin.end()
    })
  }
}

export type IngestOptions = { bin: string; env: NodeJS.ProcessEnv }

/** One session's archive bridge: serialised requests, bounded waits, restart on failure. */
export class IngestClient {
  private bridge: Bridge | null = null
  private queue: Promise<unknown> = Promise.resolve()
  private closed = false

  constructor(private readonly options: IngestOptions) {}

  /** Start the child now so broker startup overlaps with the first model turn. */
  start(): void {
    if (!this.closed) this.current()
  }

  private current(): Bridge {
    if (this.bridge === null || this.bridge.exited) {
      this.bridge = new Bridge(this.options.bin, this.options.env)
    }
    return this.bridge
  }

  /**
   * Send one operation and wait for its acknowledgement; resolves with the ack when
   * `ok` is true, rejects with ArchiveRejected (bridge said no) or ArchiveUnavailable
   * (timeout, bridge gone). `timeoutMs` counts from this call, queue wait included.
   */
  request(operation: Record<string, unknown>, timeoutMs: number): Promise<Ack> {
    if (this.closed) return Promise.reject(new ArchiveUnavailable("archive session is closed"))
    const deadline = Date.now() + timeoutMs
    const run = async (): Promise<Ack> => {
      const remaining = deadline - Date.now()
      if (remaining < MIN_SEND_MARGIN_MS) {
        throw new ArchiveUnavailable(`archive request waited past its ${timeoutMs} ms deadline`)
      }
      const body = operation["operation"] === "begin_call" ? { ...operation, deadlineAtMs: deadline } : operation
      const ack = await this.current().send(body, remaining, timeoutMs)
      if (!ack.ok) throw new ArchiveRejected(`archive rejected ${String(operation["operation"])}: ${ack.error ?? "no reason given"}`)
      return ack
    }
    const result = this.queue.then(run, run)
    this.queue = result.catch(() => undefined)
    return result
  }

  async close(): Promise<void> {
    this.closed = true
    await this.queue
    const bridge = this.bridge
    this.bridge = null
    await bridge?.close()
  }
}
