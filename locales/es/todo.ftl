### rpiv_todo: textos de la interfaz, español.

## Panel

overlay-heading = Tareas
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
overlay-more-count =
    { $count ->
        [one] +{ $count } tarea más
       *[other] +{ $count } tareas más
    }
overlay-more-completed =
    { $completed ->
        [one] { $completed } completada
       *[other] { $completed } completadas
    }
overlay-more-pending =
    { $pending ->
        [one] { $pending } pendiente
       *[other] { $pending } pendientes
    }
overlay-expand-hint = { $key } para expandir
overlay-collapsed = contraído

## Estados

status-pending = pendiente
status-in_progress = en curso
status-completed = completada
status-deleted = eliminada

## /todos

todos-completed =
    { $done ->
        [one] { $done }/{ $total } completada
       *[other] { $done }/{ $total } completadas
    }
todos-in-progress = { $count } en curso
todos-pending =
    { $count ->
        [one] { $count } pendiente
       *[other] { $count } pendientes
    }
todos-section-pending = Pendientes
todos-section-in-progress = En curso
todos-section-completed = Completadas
todos-empty = Aún no hay tareas. Pide al agente que planifique una tarea de varios pasos.
todos-noninteractive = /todos necesita una interfaz interactiva.
