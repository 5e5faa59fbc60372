"""Real agent programs from the npm registry, installed once per version into a test cache.

The cache is $YARP_TEST_CACHE, else /tmp/yarp-test-cache; each package and
version gets its own directory. Installing needs the registry, so it runs before
a test enters its loopback-only network namespace. A test is skipped only when
node or npm is missing or npm cannot reach the registry, and never in CI
(`real_agent_required`); any other install failure fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from real_agent_required import unavailable

NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH",
                  "network", "getaddrinfo")


def npm_binary(package: str, version: str, command: str, cache_name: str) -> Path:
    """The path of `command` from `package@version`, installing it into the cache when absent."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        unavailable(f"node and npm are needed to run the real {command}")
    cache = Path(os.environ.get("YARP_TEST_CACHE") or "/tmp/yarp-test-cache") / f"{cache_name}-{version}"
    binary = cache / "node_modules" / ".bin" / command
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", f"{package}@{version}"],
            cwd=cache, capture_output=True, text=True, timeout=600, check=False)
        if result.returncode != 0:
            if any(marker in result.stderr for marker in NETWORK_ERRORS):
                unavailable(f"npm could not reach the registry to install {package} (no network)")
            raise AssertionError(f"npm install failed: {result.stderr[-800:]}")
    return binary


def version_of(binary: Path) -> str:
    result = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr[-400:]
    return result.stdout.strip()


CODEX_VERSION = "0.171.0"
#: Codex's network rule: no update check, no analytics, no plugins or apps, no endless reconnects.
CODEX_CONFIG = """\
model_provider = "scripted"
model = "scripted-model"
check_for_update_on_startup = false
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
unbounded_connection_retries = false
[model_providers.scripted]
name = "Scripted"
base_url = "{base_url}"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"""


def codex_binary() -> Path:
    """The real Codex CLI of `CODEX_VERSION`, installed into the test cache (before any namespace)."""
    binary = npm_binary("@openai/codex", CODEX_VERSION, "codex", "codex")
    assert version_of(binary) == f"codex-cli {CODEX_VERSION}"
    return binary


OPENCODE_VERSION = "1.18.33"


def opencode_binary() -> Path:
    """The real opencode CLI of `OPENCODE_VERSION` (the npm package ships its binary), installed into the cache."""
    return npm_binary("opencode-ai", OPENCODE_VERSION, "opencode", "opencode")


def opencode_config(base_url: str) -> str:
    """`OPENCODE_CONFIG_CONTENT` for the scripted model: no update check, no sharing, one provider."""
    return json.dumps({
        "autoupdate": False,
        "share": "disabled",
        "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible",
                                  "options": {"baseURL": base_url, "apiKey": "dummy"},
                                  "models": {"scripted-model": {"tool_call": True}}}},
        "model": "scripted/scripted-model",
    })


def seed_opencode_config(config_dir: Path) -> None:
    """Let opencode load plugins from `config_dir` without its npm install of `@opencode-ai/plugin`.

    Before it loads any plugin, opencode installs that package into each of its
    configuration folders and waits for it; without a network the install
    retries for about 70 s. A `node_modules` folder (empty is enough) and a
    lock file whose root names the package make it skip the install.
    """
    (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": OPENCODE_VERSION}}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock))


GEMINI_VERSION = "0.61.0"
#: Gemini CLI's settings for a scripted run: API-key auth (the key and base URL come from the
#: environment), no update check, no usage statistics or telemetry. The hooks are added by
#: `yarp hook install gemini`, merged into this file.
GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def gemini_binary() -> Path:
    """The real Gemini CLI of `GEMINI_VERSION`, installed into the test cache (before any namespace)."""
    binary = npm_binary("@google/gemini-cli", GEMINI_VERSION, "gemini", "gemini-cli")
    assert version_of(binary) == GEMINI_VERSION
    return binary


QWEN_CODE_VERSION = "0.24.4"
#: Qwen Code's settings for a scripted run: OpenAI-compatible auth (key, base URL and model come
#: from the environment), no update check, no usage statistics or telemetry.
QWEN_CODE_SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def qwen_code_binary() -> Path:
    """The real Qwen Code CLI of `QWEN_CODE_VERSION`, installed into the test cache (before any namespace)."""
    binary = npm_binary("@qwen-code/qwen-code", QWEN_CODE_VERSION, "qwen", "qwen-code")
    assert version_of(binary) == QWEN_CODE_VERSION
    return binary


KILO_CODE_VERSION = "7.7.7"


def kilo_code_binary() -> Path:
    """The real Kilo Code CLI of `KILO_CODE_VERSION` (its npm package installs the platform binary), in the cache.

    The version is pinned: the registry's newest launcher (7.8.1) names platform
    packages the registry does not hold, and its install fails.
    """
    binary = npm_binary("@kilocode/cli", KILO_CODE_VERSION, "kilo", "kilo-code")
    assert version_of(binary) == KILO_CODE_VERSION
    return binary


def seed_kilo_config(config_dir: Path) -> None:
    """Let Kilo Code load plugins from `config_dir` without its npm install of `@kilocode/plugin`
    (opencode's rule under Kilo's package name: see `seed_opencode_config`)."""
    (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@kilocode/plugin": KILO_CODE_VERSION}}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock))


CLINE_VERSION = "3.0.65"
#: Cline's sessions run in its own process, not in the hub daemon it would otherwise start (and leave running).
CLINE_ENV = {"CLINE_SESSION_BACKEND_MODE": "local"}


def cline_binary() -> Path:
    """The real Cline CLI of `CLINE_VERSION` (its npm package installs the platform binary), in the cache."""
    binary = npm_binary("cline", CLINE_VERSION, "cline", "cline")
    assert version_of(binary) == CLINE_VERSION
    return binary


#: Factory's Droid. Its launcher package (`@factory/cli`, newest 0.225.1 on the registry) names
#: platform packages of its own version, which the registry does not hold; the platform package
#: holds the whole program, so it is installed itself, at the newest version the registry has.
DROID_VERSION = "0.225.2"


def droid_settings(base_url: str) -> dict:
    """Droid's `~/.factory/settings.json` for a scripted run: the scripted model as a custom model
    (`-m custom:scripted-model`), no login; the hooks are merged in by `yarp hook install droid`."""
    return {"customModels": [{"model": "scripted-model", "displayName": "Scripted", "baseUrl": base_url,
                              "apiKey": "dummy", "provider": "generic-chat-completion-api",
                              "maxOutputTokens": 4096}]}


def droid_binary() -> Path:
    """The real Droid of `DROID_VERSION` (its linux platform package), installed into the test cache."""
    import platform

    arch = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine())
    if arch is None:
        unavailable(f"Droid's npm packages hold no program for {platform.machine()}")
    package = f"@factory/cli-linux-{arch}"
    binary = npm_binary(package, DROID_VERSION, "droid", f"droid-{arch}")
    if not binary.exists():
        # The platform package declares no `bin`: link its program where npm_binary looks for it.
        binary.parent.mkdir(exist_ok=True)
        binary.symlink_to(Path("..") / package / "bin" / "droid")
    assert version_of(binary) == DROID_VERSION
    return binary
