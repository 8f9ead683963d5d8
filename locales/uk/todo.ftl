### rpiv_todo: тексти інтерфейсу, українська.
### Три форми числа: one (1, 21, 101), few (2–4, 22–24), many (0, 5–20, 25–30);
### other дістається дробовим числам.

## Панель

overlay-heading = Завдання
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
        [one] ще { $count } завдання
        [few] ще { $count } завдання
        [many] ще { $count } завдань
       *[other] ще { $count } завдання
    }
overlay-more-completed =
    { $completed ->
        [one] { $completed } виконане
        [few] { $completed } виконані
        [many] { $completed } виконано
       *[other] { $completed } виконано
    }
overlay-more-pending =
    { $pending ->
        [one] { $pending } очікує
       *[other] { $pending } очікують
    }
overlay-expand-hint = { $key } — розгорнути
overlay-collapsed = згорнуто

## Статуси

status-pending = очікує
status-in_progress = у роботі
status-completed = виконано
status-deleted = видалено

## /todos

todos-completed = виконано { $done } з { $total }
todos-in-progress = { $count } у роботі
todos-pending =
    { $count ->
        [one] { $count } очікує
       *[other] { $count } очікують
    }
todos-section-pending = Очікують
todos-section-in-progress = У роботі
todos-section-completed = Виконані
todos-empty = Завдань поки немає. Попросіть агента спланувати багатокрокове завдання.
todos-noninteractive = Для /todos потрібен інтерактивний інтерфейс.
