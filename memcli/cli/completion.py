"""Shell completion (Click's own mechanism, for bash, zsh and fish): ids and tags from the store.

Completion runs before any command does, so it opens the store itself, read-only and quietly: a store
that does not exist or cannot be read completes nothing rather than print an error into the shell.
"""

from __future__ import annotations

from click.shell_completion import CompletionItem


def _store(ctx):
    from memcli.store.folder import Store, find_store

    store = Store(find_store(ctx.find_root().params.get("store_dir")))
    return store if store.exists and (store.index_dir).is_dir() else None


def _catalog(ctx):
    from memcli.index.catalog import Catalog

    store = _store(ctx)
    return Catalog(store) if store else None


def ids(ctx, param, incomplete: str) -> list[CompletionItem]:
    """The newest memories with their first words: as short ids when nothing is typed yet, else the
    short ids and the full ids that begin with what is typed (a short id is the id's end)."""
    try:
        catalog = _catalog(ctx)
        if catalog is None:
            return []
        if incomplete:
            shown = catalog.short_ids_starting(incomplete, limit=50)
            shown += [(memory_id, memory_id) for memory_id in catalog.ids_starting(incomplete, limit=50)]
        else:
            shown = [(catalog.short_id(memory_id), memory_id) for memory_id in catalog.ids_starting("", limit=50)]
        return [CompletionItem(handle, help=" ".join(catalog.get(memory_id).raw.split())[:60])
                for handle, memory_id in shown]
    except Exception:  # completion must never break the shell
        return []


def tags(ctx, param, incomplete: str) -> list[CompletionItem]:
    """Tags in use that start with what is typed; `mem tag ID +<TAB>` and `-<TAB>` complete them too."""
    sign = incomplete[:1] if incomplete[:1] in "+-" and incomplete else ""
    typed = incomplete[len(sign):].lower()
    try:
        from memcli.index.filters import Filters

        catalog = _catalog(ctx)
        counts = catalog.tag_counts(Filters()) if catalog else []
    except Exception:
        return []
    return [CompletionItem(sign + tag, help=f"{count} memories") for tag, count in counts if tag.startswith(typed)]


def ids_then_tags(ctx, param, incomplete: str) -> list[CompletionItem]:
    """`mem tag`: ids first; a word starting with + or - is a tag change."""
    return tags(ctx, param, incomplete) if incomplete[:1] in ("+", "-") else ids(ctx, param, incomplete)
