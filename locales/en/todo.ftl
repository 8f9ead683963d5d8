### rpiv_todo UI chrome, English (the reference every other locale must cover).
### Only what a person sees: the model's text always stays English.
### Counts arrive as numbers, so selectors pick CLDR plural categories;
### [0] matches an exact zero, which the summary leaves out.

## Overlay

overlay-heading = Todos
# Summary row when tasks do not fit: +N more (X completed, Y pending), a zero part omitted.
overlay-more =
    { $completed ->
        [0]
            { $pending ->
                [0] { overlay-more-count }
               *[other] { overlay-more-count } ({ overlay-more-pending })
            }
       *[other]
            { $pending ->
                [0] { overlay-more-count } ({ overlay-more-completed })
               *[other] { overlay-more-count } ({ overlay-more-completed }, { overlay-more-pending })
            }
    }
overlay-more-count = +{ $count } more
overlay-more-completed = { $completed } completed
overlay-more-pending = { $pending } pending
# $key is the collapse key as configured, e.g. ctrl+shift+t.
overlay-expand-hint = { $key } to expand
overlay-collapsed = collapsed

## Status words

status-pending = pending
status-in_progress = in progress
status-completed = completed
status-deleted = deleted

## /todos

todos-completed = { $done }/{ $total } completed
todos-in-progress = { $count } in progress
todos-pending = { $count } pending
todos-section-pending = Pending
todos-section-in-progress = In Progress
todos-section-completed = Completed
todos-empty = No todos yet. Ask the agent to plan a multi-step task.
todos-noninteractive = /todos needs an interactive UI.
