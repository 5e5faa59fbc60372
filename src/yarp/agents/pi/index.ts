/**
 * Pi extension entry point: `pi -e <this folder>` (or `-e index.ts`) loads it.
 *
 * It only wires the default options; all behaviour lives in extension.ts.
 */

import { createYarpExtension } from "./extension.ts"

export default createYarpExtension()
