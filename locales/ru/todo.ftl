### rpiv_todo: тексты интерфейса, русский.
### Три формы числа: one (1, 21, 101), few (2–4, 22–24), many (0, 5–20, 25–30);
### other достаётся дробным числам.

## Панель

overlay-heading = Задачи
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
        [one] ещё { $count } задача
        [few] ещё { $count } задачи
        [many] ещё { $count } задач
       *[other] ещё { $count } задачи
    }
overlay-more-completed =
    { $completed ->
        [one] { $completed } выполнена
        [few] { $completed } выполнены
        [many] { $completed } выполнено
       *[other] { $completed } выполнено
    }
overlay-more-pending =
    { $pending ->
        [one] { $pending } ожидает
       *[other] { $pending } ожидают
    }
overlay-expand-hint = { $key } — развернуть
overlay-collapsed = свёрнуто

## Статусы

status-pending = ожидает
status-in_progress = в работе
status-completed = выполнена
status-deleted = удалена

## /todos

todos-completed = выполнено { $done } из { $total }
todos-in-progress = { $count } в работе
todos-pending =
    { $count ->
        [one] { $count } ожидает
       *[other] { $count } ожидают
    }
todos-section-pending = Ожидают
todos-section-in-progress = В работе
todos-section-completed = Выполнены
todos-empty = Задач пока нет. Попросите агента спланировать многошаговую задачу.
todos-noninteractive = Для /todos нужен интерактивный интерфейс.
