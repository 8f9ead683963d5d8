### rpiv_todo: textos da interface, português europeu.
### pt-BR cai para este ficheiro e depois para en quando lhe falta uma mensagem.

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

## Estados

status-pending = pendente
status-in_progress = em curso
status-completed = concluída
status-deleted = eliminada

## /todos

# [0] first: the CLDR rule for "pt" puts 0 in "one", but "0/3 concluídas" is what reads right.
todos-completed =
    { $done ->
        [0] { $done }/{ $total } concluídas
        [one] { $done }/{ $total } concluída
       *[other] { $done }/{ $total } concluídas
    }
todos-in-progress = { $count } em curso
todos-pending =
    { $count ->
        [one] { $count } pendente
       *[other] { $count } pendentes
    }
todos-section-pending = Pendentes
todos-section-in-progress = Em curso
todos-section-completed = Concluídas
todos-empty = Ainda não há tarefas. Peça ao agente que planeie uma tarefa com vários passos.
todos-noninteractive = /todos requer uma interface interativa.
