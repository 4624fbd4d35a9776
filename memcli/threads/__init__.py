"""Conversation threads: short-term memory kept in plain files, rebuilt as a chat-API message list
within a token budget, with older turns folded into summaries that are also long-term memories."""
