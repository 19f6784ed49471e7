# The image of the worker and the bot: Python, tmux and git, ittybus, and (by default) Claude Code for agents.
FROM python:3.11-slim

# "" leaves Claude Code out (a bot-only image, or IB_AGENT_COMMAND names another agent program). Pinned to
# the version the pane and dialog readers are tested against (the suite's claude-agent-sdk bundles it).
ARG CLAUDE_CODE_PACKAGE=@anthropic-ai/claude-code@2.1.332
# The user everything runs as. Give it the uid and gid that own your repository on the host
# (compose.yaml passes IB_UID and IB_GID), so its commits, worktrees and .ib/ are yours, not root's.
ARG IB_UID=1000
ARG IB_GID=1000

RUN apt-get update \
    && apt-get install -y --no-install-recommends tmux git ca-certificates fonts-dejavu-core \
    && if [ -n "$CLAUDE_CODE_PACKAGE" ]; then \
        apt-get install -y --no-install-recommends nodejs npm \
        && npm install -g "$CLAUDE_CODE_PACKAGE" \
        && npm cache clean --force; \
    fi \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/ittybus
COPY . .
RUN pip install --no-cache-dir . && ib --help > /dev/null

# ~/.claude exists in the image so that the volume compose mounts there starts out owned by the user
RUN (getent group "$IB_GID" > /dev/null || groupadd --gid "$IB_GID" ittybus) \
    && useradd --uid "$IB_UID" --gid "$IB_GID" --create-home --shell /bin/bash ittybus \
    && mkdir /home/ittybus/.claude && chown "$IB_UID:$IB_GID" /home/ittybus/.claude
USER ittybus

ENV PYTHONUNBUFFERED=1
# git trusts the one repository mounted at IB_ROOT (compose mounts it at its host path, set as IB_ROOT) whoever
# owns it, and no other: in the user's ~/.gitconfig, so `docker compose exec worker ib ...` trusts it too.
ENTRYPOINT ["/bin/sh", "-c", "[ -z \"$IB_ROOT\" ] || git config --global --replace-all safe.directory \"$IB_ROOT\"; exec \"$@\"", "entry"]
CMD ["ib", "worker", "--verbose"]
