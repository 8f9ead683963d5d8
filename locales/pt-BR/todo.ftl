### rpiv_todo: textos da interface, português do Brasil.

## Painel

overlay-heading = Tarefas
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
        [one] +{ $count } outra tarefa
       *[other] +{ $count } outras tarefas
    }
overlay-more-completed =
    { $completed ->
        [one] { $completed } concluída
       *[other] { $completed } concluídas
    }
overlay-more-pending =
    { $pending ->
        [one] { $pending } pendente
       *[other] { $pending } pendentes
    }
overlay-expand-hint = { $key } para expandir
overlay-collapsed = recolhido

## Status

status-pending = pendente
status-in_progress = em andamento
status-completed = concluída
status-deleted = excluída

## /todos

# [0] first: CLDR puts 0 in "one" for Portuguese, but "0/3 concluídas" is what reads right.
todos-completed =
    { $done ->
        [0] { $done }/{ $total } concluídas
        [one] { $done }/{ $total } concluída
       *[other] { $done }/{ $total } concluídas
    }
todos-in-progress = { $count } em andamento
todos-pending =
    { $count ->
        [one] { $count } pendente
       *[other] { $count } pendentes
    }
todos-section-pending = Pendentes
todos-section-in-progress = Em andamento
todos-section-completed = Concluídas
todos-empty = Ainda não há tarefas. Peça ao agente para planejar uma tarefa com várias etapas.
todos-noninteractive = /todos precisa de uma interface interativa.
