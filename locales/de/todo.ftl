### rpiv_todo UI-Texte, Deutsch.

## Overlay

overlay-heading = Aufgaben
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
        [one] +{ $count } weitere Aufgabe
       *[other] +{ $count } weitere Aufgaben
    }
overlay-more-completed = { $completed } erledigt
overlay-more-pending = { $pending } offen
overlay-expand-hint = { $key } zum Aufklappen
overlay-collapsed = eingeklappt

## Statuswörter

status-pending = offen
status-in_progress = in Arbeit
status-completed = erledigt
status-deleted = gelöscht

## /todos

todos-completed = { $done }/{ $total } erledigt
todos-in-progress = { $count } in Arbeit
todos-pending = { $count } offen
todos-section-pending = Offen
todos-section-in-progress = In Arbeit
todos-section-completed = Erledigt
todos-empty = Noch keine Aufgaben. Bitten Sie den Agenten, eine mehrstufige Aufgabe zu planen.
todos-noninteractive = /todos benötigt eine interaktive Oberfläche.
