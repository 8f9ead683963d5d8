### rpiv_todo 界面文字，简体中文。
### 中文没有复数变化，数量只需原样填入。

## 面板

overlay-heading = 待办
overlay-more =
    { $completed ->
        [0]
            { $pending ->
                [0] { overlay-more-count }
               *[other] { overlay-more-count }（{ overlay-more-pending }）
            }
       *[other]
            { $pending ->
                [0] { overlay-more-count }（{ overlay-more-completed }）
               *[other] { overlay-more-count }（{ overlay-more-completed }，{ overlay-more-pending }）
            }
    }
overlay-more-count = 还有 { $count } 项
overlay-more-completed = { $completed } 项已完成
overlay-more-pending = { $pending } 项待处理
overlay-expand-hint = 按 { $key } 展开
overlay-collapsed = 已折叠

## 状态

status-pending = 待处理
status-in_progress = 进行中
status-completed = 已完成
status-deleted = 已删除

## /todos

todos-completed = 已完成 { $done }/{ $total }
todos-in-progress = { $count } 项进行中
todos-pending = { $count } 项待处理
todos-section-pending = 待处理
todos-section-in-progress = 进行中
todos-section-completed = 已完成
todos-empty = 还没有待办事项。请让智能体为多步骤任务制定计划。
todos-noninteractive = /todos 需要交互式界面。
