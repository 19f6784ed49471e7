"""The /auto loop: its decisions as one pure function of (state, event) → (state, actions) (`decide`),
what it tells agents (`prompts`), and the loop the worker runs, which feeds it events and carries out the
actions (`loop`).

`decide` and `prompts` are pure. `loop` may import bus, worker.agents, worker.merges and
worker.runtime.
"""
