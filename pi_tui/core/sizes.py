"""Byte counts for people: pi's ``formatSize`` (tool notices, resource size limits)."""

from __future__ import annotations


def format_size(num_bytes: int) -> str:
    """``512B``, ``50.0KB``, ``1.5MB`` — pi's formatSize."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f}KB"
    return f"{num_bytes / (1024 * 1024):.1f}MB"
