# The image of the worker and the bot: Python, tmux and git, ittybus, and (by default) Claude Code for agents.
FROM python:3.11-slim

# "" leaves Claude Code out (a bot-only image, or IB_AGENT_COMMAND names another agent program). Pinned to
# the version the pane and dialog readers are tested against (the suite's claude-agent-sdk bundles it).
ARG CLAUDE_CODE_PACKAGE=@anthropic-ai/claude-code@2.1.332

# safe.directory: the repository is mounted from the host and belongs to another user than root in here
RUN apt-get update \
    && apt-get install -y --no-install-recommends tmux git ca-certificates fonts-dejavu-core \
    && if [ -n "$CLAUDE_CODE_PACKAGE" ]; then \
        apt-get install -y --no-install-recommends nodejs npm \
        && npm install -g "$CLAUDE_CODE_PACKAGE" \
        && npm cache clean --force; \
    fi \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

WORKDIR /opt/ittybus
COPY . .
RUN pip install --no-cache-dir . && ib --help > /dev/null

ENV PYTHONUNBUFFERED=1
CMD ["ib", "worker", "--verbose"]
