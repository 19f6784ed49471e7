-- Append a context note to a task. KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id, 2 kind, 3 text. Returns the note's time (ms).
local id = arg(1)
must_exist(id)
append_note(id, arg(2), arg(3), id)
return NOW_MS
