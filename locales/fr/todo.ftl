### rpiv_todo : textes de l’interface, français.
### En français, 0 et 1 prennent le singulier (catégorie « one »).

## Panneau

overlay-heading = Tâches
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
        [one] +{ $count } autre tâche
       *[other] +{ $count } autres tâches
    }
overlay-more-completed =
    { $completed ->
        [one] { $completed } terminée
       *[other] { $completed } terminées
    }
overlay-more-pending = { $pending } en attente
overlay-expand-hint = { $key } pour déplier
overlay-collapsed = replié

## Statuts

status-pending = en attente
status-in_progress = en cours
status-completed = terminée
status-deleted = supprimée

## /todos

todos-completed =
    { $done ->
        [one] { $done }/{ $total } terminée
       *[other] { $done }/{ $total } terminées
    }
todos-in-progress = { $count } en cours
todos-pending = { $count } en attente
todos-section-pending = En attente
todos-section-in-progress = En cours
todos-section-completed = Terminées
todos-empty = Aucune tâche pour l’instant. Demandez à l’agent de planifier une tâche en plusieurs étapes.
todos-noninteractive = /todos nécessite une interface interactive.
