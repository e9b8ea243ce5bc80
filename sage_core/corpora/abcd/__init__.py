"""ABCD (Action-Based Conversations): action-grounded workflows and the conversation loader."""
