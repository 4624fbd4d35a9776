"""Hook payloads as each client documents them (Claude Code hooks reference, Codex CLI hooks, Gemini CLI
hooks reference), written here from their field lists."""

from __future__ import annotations


def claude(event: str, cwd, session: str = "c1", **fields) -> dict:
    return {"session_id": session, "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": str(cwd), "permission_mode": "default", "hook_event_name": event, **fields}


def claude_bash(cwd, command: str, stdout: str, tool_use_id: str = "toolu_01", session: str = "c1") -> dict:
    return claude("PostToolUse", cwd, session, tool_name="Bash", tool_use_id=tool_use_id,
                  tool_input={"command": command, "description": "run it"},
                  tool_response={"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False})


def claude_edit(cwd, path: str, old: str, new: str, tool_use_id: str, session: str = "c1") -> dict:
    return claude("PostToolUse", cwd, session, tool_name="Edit", tool_use_id=tool_use_id,
                  tool_input={"file_path": str(cwd / path), "old_string": old, "new_string": new},
                  tool_response={"filePath": str(cwd / path), "success": True})


def claude_read(cwd, path: str, content: str, tool_use_id: str, session: str = "c1") -> dict:
    return claude("PostToolUse", cwd, session, tool_name="Read", tool_use_id=tool_use_id,
                  tool_input={"file_path": str(cwd / path)},
                  tool_response={"type": "text", "file": {"filePath": str(cwd / path), "content": content}})


def codex(event: str, cwd, session: str = "x1", **fields) -> dict:
    return {"session_id": session, "transcript_path": None, "cwd": str(cwd), "hook_event_name": event,
            "model": "gpt-5-codex", **fields}


def gemini(event: str, cwd, session: str = "g1", **fields) -> dict:
    return {"session_id": session, "transcript_path": "/home/u/.gemini/tmp/chat.json", "cwd": str(cwd),
            "hook_event_name": event, "timestamp": "2026-12-05T09:00:00Z", **fields}


# What Claude Code 2.1.197 (npm @anthropic-ai/claude-code) sent to hooks on this machine, recorded with a
# `cat > file` hook beside mem's for `claude -p "say hi"` without an account (it stops at "Not logged in"
# after UserPromptSubmit; no tool ran).
RECORDED_CLAUDE_CODE = [
    {"session_id": "c4a3121a-a81e-4818-b0dc-584f7b8d44c3",
     "transcript_path": "/root/.claude/projects/-tmp-cap2-proj/c4a3121a-a81e-4818-b0dc-584f7b8d44c3.jsonl",
     "cwd": "/tmp/cap2/proj", "hook_event_name": "SessionStart", "source": "startup"},
    {"session_id": "c4a3121a-a81e-4818-b0dc-584f7b8d44c3",
     "transcript_path": "/root/.claude/projects/-tmp-cap2-proj/c4a3121a-a81e-4818-b0dc-584f7b8d44c3.jsonl",
     "cwd": "/tmp/cap2/proj", "prompt_id": "e257dea8-b435-4842-8549-c49f98b1569e", "permission_mode": "default",
     "hook_event_name": "UserPromptSubmit", "prompt": "say hi"},
    {"session_id": "c4a3121a-a81e-4818-b0dc-584f7b8d44c3",
     "transcript_path": "/root/.claude/projects/-tmp-cap2-proj/c4a3121a-a81e-4818-b0dc-584f7b8d44c3.jsonl",
     "cwd": "/tmp/cap2/proj", "prompt_id": "e257dea8-b435-4842-8549-c49f98b1569e", "hook_event_name": "SessionEnd",
     "reason": "other"},
]
